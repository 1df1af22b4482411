package controller

import "errors"

// Sentinel errors. Operations wrap them with %w and a message naming the
// resource; the protocol edge maps each to its Kafka error code.
var (
	// ErrTopicExists: TOPIC_ALREADY_EXISTS.
	ErrTopicExists = errors.New("topic already exists")
	// ErrUnknownTopic: UNKNOWN_TOPIC_OR_PARTITION.
	ErrUnknownTopic = errors.New("unknown topic")
	// ErrUnknownTopicID: UNKNOWN_TOPIC_ID. Errors wrapping it also wrap
	// ErrUnknownTopic.
	ErrUnknownTopicID = errors.New("unknown topic id")
	// ErrInvalidTopic: INVALID_TOPIC_EXCEPTION.
	ErrInvalidTopic = errors.New("invalid topic")
	// ErrInvalidPartitions: INVALID_PARTITIONS.
	ErrInvalidPartitions = errors.New("invalid partitions")
	// ErrInvalidReplicationFactor: INVALID_REPLICATION_FACTOR.
	ErrInvalidReplicationFactor = errors.New("invalid replication factor")
	// ErrInvalidReplicaAssignment: INVALID_REPLICA_ASSIGNMENT.
	ErrInvalidReplicaAssignment = errors.New("invalid replica assignment")
	// ErrInvalidConfig: INVALID_CONFIG.
	ErrInvalidConfig = errors.New("invalid config")
	// ErrPolicyViolation: POLICY_VIOLATION.
	ErrPolicyViolation = errors.New("policy violation")
	// ErrNotController: NOT_CONTROLLER. This node is not (or not yet) the
	// active controller, or is shutting down.
	ErrNotController = errors.New("not the active controller")
	// ErrInvalidRequest: INVALID_REQUEST.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrStaleBrokerEpoch: STALE_BROKER_EPOCH. The broker epoch is not the
	// one of the broker's current registration.
	ErrStaleBrokerEpoch = errors.New("stale broker epoch")
	// ErrBrokerNotRegistered: BROKER_ID_NOT_REGISTERED.
	ErrBrokerNotRegistered = errors.New("broker is not registered")
	// ErrFencedLeaderEpoch: FENCED_LEADER_EPOCH. The caller's leader epoch
	// is older than the partition's.
	ErrFencedLeaderEpoch = errors.New("fenced leader epoch")
	// ErrInvalidUpdateVersion: INVALID_UPDATE_VERSION. The caller's
	// partition epoch is older than the partition's.
	ErrInvalidUpdateVersion = errors.New("invalid partition epoch")
	// ErrIneligibleReplica: INELIGIBLE_REPLICA. A proposed ISR member is
	// fenced or shutting down.
	ErrIneligibleReplica = errors.New("ineligible replica")
	// ErrElectionNotNeeded: ELECTION_NOT_NEEDED.
	ErrElectionNotNeeded = errors.New("election not needed")
	// ErrPreferredLeaderNotAvailable: PREFERRED_LEADER_NOT_AVAILABLE.
	ErrPreferredLeaderNotAvailable = errors.New("preferred leader not available")
	// ErrEligibleLeadersNotAvailable: ELIGIBLE_LEADERS_NOT_AVAILABLE.
	ErrEligibleLeadersNotAvailable = errors.New("eligible leaders not available")
	// ErrNoReassignmentInProgress: NO_REASSIGNMENT_IN_PROGRESS.
	ErrNoReassignmentInProgress = errors.New("no reassignment in progress")
	// ErrCorrupt marks metadata on disk or in the log that cannot be decoded
	// or violates the image's invariants.
	ErrCorrupt = errors.New("corrupt metadata")
	// ErrClusterAuthorization: CLUSTER_AUTHORIZATION_FAILED. A forwarded
	// record needs the principal of an authorized client and has none.
	ErrClusterAuthorization = errors.New("cluster authorization failed")
)
