package coordinator

import "errors"

// Errors of share-partitions and the share coordinator, one per Kafka error
// condition; core/api picks the code.
var (
	// ErrUnknownTopicID is a topic id the metadata image does not know
	// (UNKNOWN_TOPIC_ID).
	ErrUnknownTopicID = errors.New("coordinator: unknown topic id")
	// ErrUnknownTopicOrPartition is a partition the image does not know
	// (UNKNOWN_TOPIC_OR_PARTITION).
	ErrUnknownTopicOrPartition = errors.New("coordinator: unknown topic or partition")
	// ErrNotLeader is a share-partition of a partition another broker
	// leads, or one whose state cannot be read yet: the client retries
	// (NOT_LEADER_OR_FOLLOWER).
	ErrNotLeader = errors.New("coordinator: this broker does not serve the share-partition")
	// ErrStateWrite is a share-partition state write that failed; nothing
	// it was to make durable happened (KAFKA_STORAGE_ERROR).
	ErrStateWrite = errors.New("coordinator: writing share-partition state failed")
	// ErrNotCoordinator is a share-state request for a __share_group_state
	// partition this broker does not lead (NOT_COORDINATOR).
	ErrNotCoordinator = errors.New("coordinator: not the share coordinator of this share-partition")
	// ErrCoordinatorLoadInProgress is a state partition led here whose
	// records are not all committed yet (COORDINATOR_LOAD_IN_PROGRESS).
	ErrCoordinatorLoadInProgress = errors.New("coordinator: share-state partition still loading")
	// ErrCoordinatorNotAvailable is a __share_group_state topic that does
	// not exist yet or a partition without a leader
	// (COORDINATOR_NOT_AVAILABLE).
	ErrCoordinatorNotAvailable = errors.New("coordinator: the __share_group_state partition is not available")
	// ErrFencedLeaderEpoch is a state read or write from a share-partition
	// leader older than one seen before (FENCED_LEADER_EPOCH).
	ErrFencedLeaderEpoch = errors.New("coordinator: share-partition leader epoch is fenced")
	// ErrFencedStateEpoch is a state write or initialization with a state
	// epoch older than the stored one (FENCED_STATE_EPOCH).
	ErrFencedStateEpoch = errors.New("coordinator: share-partition state epoch is fenced")
	// ErrInvalidRequest is a malformed share-state request (INVALID_REQUEST).
	ErrInvalidRequest = errors.New("coordinator: invalid share-state request")
)
