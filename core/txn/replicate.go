package txn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gregorbroker/gregor/core/partition"
)

// State writes are acks=-1 writes: a record is appended only while this
// broker leads the partition in the shard's epoch and the ISR holds
// min.insync.replicas, and a write succeeds only once the high watermark
// passed it. The shard's lock is held across the wait, so no transition is
// acted on (no marker sent, no answer given, no later request served from
// it) before it is committed.

// minWriteTimeout bounds a state write's wait from below; Kafka waits up
// to the transaction's timeout.
const minWriteTimeout = 5 * time.Second

// appendCommitted appends encoded state records in the shard's epoch and
// waits up to timeout for the ISR. The caller holds mu.
func (s *shard) appendCommitted(b []byte, timeout time.Duration) error {
	if err := s.p.AppendCoordinatorCommitted(s.epoch, b, s.c.cfg.Sync, max(timeout, minWriteTimeout)); err != nil {
		return s.writeError(err)
	}
	return nil
}

// writeError maps a failed __transaction_state write as Kafka's
// TransactionStateManager does: NOT_LEADER_OR_FOLLOWER and
// KAFKA_STORAGE_ERROR become NOT_COORDINATOR; NOT_ENOUGH_REPLICAS(_AFTER_APPEND)
// and REQUEST_TIMED_OUT COORDINATOR_NOT_AVAILABLE; MESSAGE_TOO_LARGE
// UNKNOWN_SERVER_ERROR.
//
// The partition's error is kept as text only: the protocol edge must find
// the coordinator's error, not the partition's, in the chain.
func (s *shard) writeError(err error) error {
	switch {
	case errors.Is(err, partition.ErrNotLeader), errors.Is(err, partition.ErrClosed), errors.Is(err, partition.ErrStorage):
		return fmt.Errorf("%w: partition %d: %v", ErrNotCoordinator, s.index, err)
	case errors.Is(err, partition.ErrNotEnoughReplicas), errors.Is(err, partition.ErrNotEnoughReplicasAfterAppend),
		errors.Is(err, partition.ErrReplicationTimeout):
		return fmt.Errorf("%w: partition %d: %v", ErrCoordinatorNotAvailable, s.index, err)
	case errors.Is(err, partition.ErrMessageTooLarge):
		// Not wrapped: the protocol edge answers UNKNOWN_SERVER_ERROR.
		return fmt.Errorf("txn: partition %d: state record too large: %v", s.index, err)
	}
	return fmt.Errorf("%w: partition %d: %v", ErrStorage, s.index, err)
}

// loadEnd waits until everything in the partition's log when this broker
// became its leader is committed, and returns that offset: a new
// coordinator loads no state the ISR has not taken, and every transition
// the old leader acknowledged is below it. It returns false when the shard
// resigned or the leadership moved on first.
func loadEnd(p *partition.Partition, epoch int32, resigned func() bool) (int64, bool) {
	end := p.Log().LogEndOffset()
	for !resigned() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := p.WaitReplicated(ctx, epoch, end)
		cancel()
		switch {
		case err == nil, errors.Is(err, partition.ErrNotEnoughReplicasAfterAppend):
			return end, true
		case errors.Is(err, partition.ErrReplicationTimeout):
			continue
		}
		return 0, false
	}
	return 0, false
}
