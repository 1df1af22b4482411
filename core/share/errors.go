package share

import "errors"

// Errors of share groups, one per Kafka error condition; core/api picks the
// code.
var (
	// ErrInvalidRecordState is an acknowledgement of a record that is not
	// acquired by the member (INVALID_RECORD_STATE).
	ErrInvalidRecordState = errors.New("share: record is not acquired by this member")
	// ErrInvalidRequest is a malformed acknowledgement (INVALID_REQUEST).
	ErrInvalidRequest = errors.New("share: invalid request")
	// ErrUnknownMemberID is a member the group does not know (UNKNOWN_MEMBER_ID).
	ErrUnknownMemberID = errors.New("share: unknown member id")
	// ErrFencedMemberEpoch is a heartbeat with a stale member epoch
	// (FENCED_MEMBER_EPOCH).
	ErrFencedMemberEpoch = errors.New("share: fenced member epoch")
	// ErrGroupMaxSizeReached is a join to a full group (GROUP_MAX_SIZE_REACHED).
	ErrGroupMaxSizeReached = errors.New("share: the group is full")
	// ErrGroupIDNotFound is a group that does not exist (GROUP_ID_NOT_FOUND).
	ErrGroupIDNotFound = errors.New("share: group not found")
	// ErrInconsistentGroupProtocol is a share operation on a group of
	// another type, or the reverse (INCONSISTENT_GROUP_PROTOCOL).
	ErrInconsistentGroupProtocol = errors.New("share: the group is not a share group")
	// ErrNonEmptyGroup is a delete or offset change of a group with members
	// (NON_EMPTY_GROUP).
	ErrNonEmptyGroup = errors.New("share: the group has members")
	// ErrShareSessionNotFound is a share session the broker does not hold
	// (SHARE_SESSION_NOT_FOUND).
	ErrShareSessionNotFound = errors.New("share: share session not found")
	// ErrInvalidShareSessionEpoch is a share session epoch out of sequence
	// (INVALID_SHARE_SESSION_EPOCH).
	ErrInvalidShareSessionEpoch = errors.New("share: invalid share session epoch")
	// ErrShareSessionLimitReached is a new share session beyond the cache
	// limit (SHARE_SESSION_LIMIT_REACHED).
	ErrShareSessionLimitReached = errors.New("share: share session limit reached")
)
