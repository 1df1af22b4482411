package partition

import "errors"

// Errors a partition returns; the protocol edge maps each to a Kafka error code.
var (
	ErrCorruptMessage       = errors.New("partition: corrupt record batch")
	ErrMessageTooLarge      = errors.New("partition: record batch too large")
	ErrInvalidRecord        = errors.New("partition: invalid record")
	ErrInvalidTimestamp     = errors.New("partition: invalid timestamp")
	ErrUnsupportedForMagic  = errors.New("partition: record format older than v2 is not supported")
	ErrOutOfOrderSequence   = errors.New("partition: out of order sequence number")
	ErrInvalidProducerEpoch = errors.New("partition: invalid producer epoch")
	ErrNotLeader            = errors.New("partition: not the leader")
	ErrNotFollower          = errors.New("partition: not a follower")
	ErrFencedLeaderEpoch    = errors.New("partition: fenced leader epoch")
	ErrUnknownLeaderEpoch   = errors.New("partition: unknown leader epoch")
	ErrOffsetOutOfRange     = errors.New("partition: offset out of range")
	ErrNotEnoughReplicas    = errors.New("partition: not enough in-sync replicas")
	ErrStorage              = errors.New("partition: storage error")
	ErrClosed               = errors.New("partition: closed")
	// ErrInvalidTxnState is a batch that does not fit the producer's
	// transaction (INVALID_TXN_STATE).
	ErrInvalidTxnState = errors.New("partition: invalid transaction state")
	// ErrCoordinatorFenced is a transaction marker from a coordinator older
	// than one already seen (TRANSACTION_COORDINATOR_FENCED).
	ErrCoordinatorFenced = errors.New("partition: transaction coordinator fenced")
)
