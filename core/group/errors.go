package group

import "errors"

// Errors of the coordinator. Each names one Kafka error condition; the
// protocol edge picks the code.
var (
	ErrNotCoordinator            = errors.New("group: this broker is not the coordinator of the group")
	ErrCoordinatorLoadInProgress = errors.New("group: the coordinator is loading the group's partition")
	ErrCoordinatorNotAvailable   = errors.New("group: the coordinator is not available")
	ErrInvalidGroupID            = errors.New("group: invalid group id")
	ErrUnknownMemberID           = errors.New("group: unknown member id")
	ErrIllegalGeneration         = errors.New("group: illegal generation")
	ErrRebalanceInProgress       = errors.New("group: rebalance in progress")
	ErrMemberIDRequired          = errors.New("group: member id required")
	ErrInconsistentGroupProtocol = errors.New("group: inconsistent group protocol")
	ErrInvalidSessionTimeout     = errors.New("group: invalid session timeout")
	ErrGroupMaxSizeReached       = errors.New("group: the group is full")
	ErrFencedInstanceID          = errors.New("group: fenced instance id")
	ErrGroupIDNotFound           = errors.New("group: group not found")
	ErrNonEmptyGroup             = errors.New("group: the group has members")
	ErrOffsetMetadataTooLarge    = errors.New("group: offset metadata too large")
	ErrGroupSubscribedToTopic    = errors.New("group: the group is subscribed to the topic")
	ErrFencedMemberEpoch         = errors.New("group: fenced member epoch")
	ErrStaleMemberEpoch          = errors.New("group: stale member epoch")
	ErrUnreleasedInstanceID      = errors.New("group: the instance id is still in use")
	ErrUnsupportedAssignor       = errors.New("group: unsupported assignor")
	ErrInvalidRequest            = errors.New("group: invalid request")
	ErrUnknownTopicOrPartition   = errors.New("group: unknown topic or partition")
	// ErrInvalidCommitOffsetSize is a write too large for
	// __consumer_offsets (INVALID_COMMIT_OFFSET_SIZE).
	ErrInvalidCommitOffsetSize = errors.New("group: the commit is too large for __consumer_offsets")
	// ErrStorage means a record could not be written to __consumer_offsets.
	ErrStorage = errors.New("group: cannot write to __consumer_offsets")
	// ErrCorrupt marks a __consumer_offsets record that cannot be decoded.
	ErrCorrupt = errors.New("group: corrupt __consumer_offsets record")
)
