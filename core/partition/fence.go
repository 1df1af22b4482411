package partition

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Appends are fenced by leader epoch. A request is admitted under the
// leader epoch this broker led the partition in (Admit); its append checks
// that epoch again under the partition's lock, so that a request that raced
// a leadership change appends nothing, and no batch is ever stamped with an
// epoch this broker does not lead (Kafka's leader epoch check in
// Partition.appendRecordsToLeader).

// AnyEpoch is the leader epoch of an append that only needs this broker
// to lead the partition in whatever epoch is current.
const AnyEpoch int32 = -1

// Admit returns the leader epoch this broker leads the partition in, or
// ErrNotLeader. The epoch is what AppendInEpoch and friends check again.
func (p *Partition) Admit() (epoch int32, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.fenceLocked(AnyEpoch); err != nil {
		return 0, err
	}
	return p.leaderEpoch, nil
}

// fenceLocked fails when this broker does not lead the partition, or no
// longer in epoch (AnyEpoch accepts the current one). A partition outside
// replication (a lone broker, tests) leads whatever it was told, and with
// no leadership at all it accepts appends as it always did.
func (p *Partition) fenceLocked(epoch int32) error {
	if p.closed {
		return ErrClosed
	}
	if !p.replicated && p.leader < 0 {
		return nil
	}
	if !p.isLocal(p.leader) {
		return fmt.Errorf("%w: %s-%d is led by %d", ErrNotLeader, p.Topic, p.Index, p.leader)
	}
	if epoch != AnyEpoch && epoch != p.leaderEpoch {
		return fmt.Errorf("%w: %s-%d: admitted in leader epoch %d, the partition is now in %d", ErrNotLeader,
			p.Topic, p.Index, epoch, p.leaderEpoch)
	}
	return nil
}

// AppendInEpoch is Append for a request admitted in leader epoch epoch
// (Admit): nothing is appended when this broker no longer leads the
// partition in that epoch (ErrNotLeader). With acksAll the ISR must hold
// min.insync.replicas first (ErrNotEnoughReplicas), checked under the same
// lock, as an acks=-1 produce is.
func (p *Partition) AppendInEpoch(epoch int32, records []byte, acksAll bool) (AppendResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkAppendLocked(epoch, acksAll); err != nil {
		return AppendResult{}, err
	}
	return p.appendLocked(records, originClient)
}

// AppendCoordinatorInEpoch is AppendInEpoch for a coordinator's own write
// (offsets, group and transaction state): fenced by leader epoch as a
// client's, but its producer state is checked by epoch only, as
// AppendCoordinator's.
func (p *Partition) AppendCoordinatorInEpoch(epoch int32, records []byte, acksAll bool) (AppendResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkAppendLocked(epoch, acksAll); err != nil {
		return AppendResult{}, err
	}
	return p.appendLocked(records, originCoordinator)
}

// AppendAtInEpoch is AppendAt fenced as AppendInEpoch is.
func (p *Partition) AppendAtInEpoch(epoch int32, records []byte, acksAll bool) (AppendResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkAppendLocked(epoch, acksAll); err != nil {
		return AppendResult{}, err
	}
	return p.appendAtLocked(records)
}

// WriteTxnMarkerInEpoch is WriteTxnMarker fenced as AppendInEpoch is;
// markers are written as acks=-1, so the ISR must hold
// min.insync.replicas.
func (p *Partition) WriteTxnMarkerInEpoch(epoch int32, m TxnMarker) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkAppendLocked(epoch, true); err != nil {
		return -1, err
	}
	return p.writeTxnMarkerLocked(m)
}

func (p *Partition) checkAppendLocked(epoch int32, acksAll bool) error {
	if err := p.fenceLocked(epoch); err != nil {
		return err
	}
	if acksAll {
		if p.underMinISRLocked() {
			return fmt.Errorf("%w: %d in sync, min.insync.replicas is %d", ErrNotEnoughReplicas, p.isrSizeLocked(), p.effectiveMinISRLocked())
		}
	}
	return nil
}

// ErrReplicationTimeout is an acks=-1 write whose batch was not committed
// before its deadline (REQUEST_TIMED_OUT).
var ErrReplicationTimeout = errors.New("partition: timed out waiting for in-sync replicas")

// ReplicatedInEpoch is Replicated for a write appended in leader epoch
// epoch: once this broker no longer leads in that epoch the write may have
// been truncated, so it fails with ErrNotLeader even when this broker leads
// again in a later epoch.
func (p *Partition) ReplicatedInEpoch(epoch int32, offset int64) (done bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replicatedLocked(epoch, offset)
}

func (p *Partition) replicatedLocked(epoch int32, offset int64) (done bool, err error) {
	if p.closed {
		return true, ErrClosed
	}
	if !p.isLocal(p.leader) {
		return true, fmt.Errorf("%w: %s-%d is now led by %d", ErrNotLeader, p.Topic, p.Index, p.leader)
	}
	// An offline log acknowledges nothing more, as Kafka completes the
	// delayed produces of an offline partition with KAFKA_STORAGE_ERROR.
	if err := p.log.Offline(); err != nil {
		return true, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	if epoch != AnyEpoch && epoch != p.leaderEpoch {
		return true, fmt.Errorf("%w: %s-%d: written in leader epoch %d, now %d", ErrNotLeader, p.Topic, p.Index,
			epoch, p.leaderEpoch)
	}
	if p.hw < offset {
		return false, nil
	}
	if p.underMinISRLocked() {
		return true, fmt.Errorf("%w: %d in sync, min.insync.replicas is %d", ErrNotEnoughReplicasAfterAppend,
			p.isrSizeLocked(), p.effectiveMinISRLocked())
	}
	return true, nil
}

// WaitReplicated blocks until the high watermark reaches offset (the
// offset after a write appended in leader epoch epoch), as an acks=-1 write
// waits: nil once committed by at least min.insync.replicas replicas,
// ErrNotEnoughReplicasAfterAppend when committed by fewer, ErrNotLeader
// when leadership moved on, ErrReplicationTimeout when ctx ends first.
func (p *Partition) WaitReplicated(ctx context.Context, epoch int32, offset int64) error {
	for {
		changed := p.HighWatermarkChanged()
		if done, err := p.ReplicatedInEpoch(epoch, offset); done {
			return err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%w: %s-%d at offset %d: %w", ErrReplicationTimeout, p.Topic, p.Index, offset, ctx.Err())
		}
	}
}

// AppendCoordinatorCommitted is a coordinator's acks=-1 write (group
// offsets and state, transaction state): appended as AppendCoordinatorInEpoch,
// then waited for until committed by the ISR, at most timeout. With sync
// the leader's own fsync runs while the followers fetch, and its error is
// the write's. A duplicate was committed before and is not waited for.
func (p *Partition) AppendCoordinatorCommitted(epoch int32, records []byte, sync bool, timeout time.Duration) error {
	res, err := p.AppendCoordinatorInEpoch(epoch, records, true)
	if err != nil || res.Duplicate {
		return err
	}
	var synced chan error
	if sync {
		synced = make(chan error, 1)
		go func() { synced <- p.Sync() }()
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err = p.WaitReplicated(ctx, epoch, res.LastOffset+1)
	if synced != nil {
		if serr := <-synced; err == nil {
			err = serr
		}
	}
	return err
}
