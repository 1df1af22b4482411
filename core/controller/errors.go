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
	// ErrCorrupt marks metadata on disk or in the log that cannot be decoded
	// or violates the image's invariants.
	ErrCorrupt = errors.New("corrupt metadata")
)
