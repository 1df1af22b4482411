package group

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gregorbroker/gregor/core/partition"
)

// Group writes are acks=-1 writes: a record is appended only while this
// broker leads the partition in the shard's leader epoch and the ISR holds
// min.insync.replicas, and the write succeeds only once the high watermark
// passed it (Kafka's coordinator runtime completes a write when the high
// watermark reaches it). The shard's lock is held across the wait, so the
// in-memory state a write backs changes, and becomes visible to any other
// request, only after the write is committed.

// DefaultWriteTimeout is how long a group write waits for the ISR (Kafka's
// offsets.commit.timeout.ms).
const DefaultWriteTimeout = 5 * time.Second

// appendCommitted appends encoded batches in the shard's epoch and waits
// for the ISR. The caller holds mu.
func (s *shard) appendCommitted(b []byte) error {
	if err := s.p.AppendCoordinatorCommitted(s.epoch, b, s.c.cfg.Sync, s.c.cfg.WriteTimeout); err != nil {
		return s.writeError(err)
	}
	return nil
}

// writeError maps a failed __consumer_offsets write as Kafka's group
// coordinator does: a partition this broker no longer leads (or cannot
// write) is NOT_COORDINATOR, a write the ISR did not take in time is
// COORDINATOR_NOT_AVAILABLE, a batch too large INVALID_COMMIT_OFFSET_SIZE.
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
		return fmt.Errorf("%w: partition %d: %v", ErrInvalidCommitOffsetSize, s.index, err)
	case errors.Is(err, partition.ErrInvalidProducerEpoch):
		return fmt.Errorf("%w: %v", ErrProducerFenced, err)
	}
	return fmt.Errorf("%w: partition %d: %v", ErrStorage, s.index, err)
}

// loadEnd waits until everything in the partition's log when this broker
// became its leader is committed, and returns that offset: a new
// coordinator loads no record the ISR has not taken, and every record the
// old leader acknowledged is below it. It returns false when the shard
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
