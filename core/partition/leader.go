package partition

import (
	"errors"
	"fmt"
	"time"

	"github.com/gregorbroker/gregor/core/log"
)

// followerState is the leader's view of one other replica, learnt from its
// fetches in the current leader epoch (Kafka's remote replica state).
type followerState struct {
	// leo is the replica's log end offset, its last fetch offset; -1 until
	// it fetched in this epoch.
	leo int64
	// lastFetch and lastFetchLeaderLEO are when it last fetched and the
	// leader's log end offset then.
	lastFetch          time.Time
	lastFetchLeaderLEO int64
	// lastCaughtUp is the last time the replica had everything the leader
	// had; an ISR member that falls longer behind than
	// replica.lag.time.max.ms leaves the ISR.
	lastCaughtUp time.Time
}

// resetFollowersLocked starts a new leader epoch's view: nothing is known of
// any follower's log, and ISR members count as caught up now so that they
// are not removed before they had a chance to fetch.
func (p *Partition) resetFollowersLocked() {
	now := p.now()
	p.followers = make(map[int32]*followerState, len(p.replicas))
	p.epochStart = p.log.LogEndOffset()
	for _, r := range p.replicas {
		if r == p.leader {
			continue
		}
		f := &followerState{leo: -1, lastFetchLeaderLEO: -1}
		if containsID(p.isr, r) {
			f.lastCaughtUp = now
		}
		p.followers[r] = f
	}
}

// addFollowersLocked tracks replicas added to an assignment while this
// broker stays leader, and forgets removed ones.
func (p *Partition) addFollowersLocked() {
	for _, r := range p.replicas {
		if _, ok := p.followers[r]; !ok && r != p.leader {
			p.followers[r] = &followerState{leo: -1, lastFetchLeaderLEO: -1}
		}
	}
	for id := range p.followers {
		if !containsID(p.replicas, id) {
			delete(p.followers, id)
		}
	}
}

// advanceHighWatermarkLocked moves the leader's high watermark to the
// smallest log end offset in the ISR (with a pending ISR change, in either
// ISR); with this broker as the only in-sync replica that is its own log end.
// The high watermark never moves back on a leader, and stays while the ISR
// is below min.insync.replicas (Kafka's strict min ISR, KIP-966): an acks=1
// append is still acknowledged, but no consumer sees it until enough
// replicas are in sync, so a replica that left the ISR then (an eligible
// leader replica) holds every record a consumer read. leoMoved wakes
// waiters even when the high watermark stays, for follower fetches that
// wait for new data.
func (p *Partition) advanceHighWatermarkLocked(leoMoved bool) {
	if p.underMinISRLocked() {
		if leoMoved {
			p.notifyLocked()
		}
		return
	}
	hw := p.log.LogEndOffset()
	lower := func(ids []int32) {
		for _, r := range ids {
			if r == p.leader || !p.isLocal(p.leader) {
				continue
			}
			f, ok := p.followers[r]
			if !ok || f.leo < 0 {
				// Unknown until it fetches: nothing may be committed past
				// what is already.
				hw = min(hw, p.hw)
				continue
			}
			hw = min(hw, f.leo)
		}
	}
	lower(p.isr)
	lower(p.pendingISR)
	moved := hw > p.hw
	if moved {
		p.setHighWatermarkLocked(hw)
	}
	if moved || leoMoved {
		p.notifyLocked()
	}
}

// setHighWatermarkLocked moves the high watermark and records it in the log
// for the data dir's replication-offset-checkpoint.
func (p *Partition) setHighWatermarkLocked(hw int64) {
	p.hw = hw
	p.log.SetHighWatermark(hw)
}

// FollowerFetch is what the leader learnt from one follower fetch.
type FollowerFetch struct {
	// HighWatermark is the leader's high watermark after the fetch.
	HighWatermark int64
	// CaughtUp is true when the follower is outside the ISR but has
	// reached the high watermark and this epoch's start: it may join.
	CaughtUp bool
}

// ErrUnknownReplica is a fetch from a broker that is not a replica of the
// partition.
var ErrUnknownReplica = errors.New("partition: not a replica of this partition")

// IsFollower reports whether replica is another replica of this partition
// led here: a leader answers a follower fetch only from one of them.
func (p *Partition) IsFollower(replica int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.followers[replica]
	return ok && p.isLocal(p.leader)
}

// UpdateFollower records that replica fetched from fetchOffset, which is its
// log end offset, and advances the high watermark. Only the leader calls it.
func (p *Partition) UpdateFollower(replica int32, fetchOffset int64) (FollowerFetch, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.isLocal(p.leader) {
		return FollowerFetch{}, fmt.Errorf("%w: %s-%d is led by %d", ErrNotLeader, p.Topic, p.Index, p.leader)
	}
	f, ok := p.followers[replica]
	if !ok {
		return FollowerFetch{}, fmt.Errorf("%w: %d fetching %s-%d", ErrUnknownReplica, replica, p.Topic, p.Index)
	}
	now := p.now()
	leo := p.log.LogEndOffset()
	switch {
	case fetchOffset >= leo:
		f.lastCaughtUp = now
	case f.lastFetchLeaderLEO >= 0 && fetchOffset >= f.lastFetchLeaderLEO:
		// It has what the leader had at its previous fetch.
		f.lastCaughtUp = f.lastFetch
	}
	f.leo, f.lastFetch, f.lastFetchLeaderLEO = fetchOffset, now, leo
	p.advanceHighWatermarkLocked(false)
	res := FollowerFetch{HighWatermark: p.hw}
	res.CaughtUp = !containsID(p.isr, replica) && !containsID(p.pendingISR, replica) &&
		fetchOffset >= p.hw && fetchOffset >= p.epochStart
	return res, nil
}

// ReplicaView is a leader's replication state at one moment, for ISR
// decisions.
type ReplicaView struct {
	Leader, LeaderEpoch, PartitionEpoch int32
	Replicas, ISR                       []int32
	// Pending is true while an ISR change awaits the controller.
	Pending       bool
	HighWatermark int64
	LogEndOffset  int64
	// EpochStart is where this leader's epoch began.
	EpochStart int64
	Followers  []FollowerView
}

// FollowerView is one follower as the leader sees it.
type FollowerView struct {
	ID           int32
	LogEndOffset int64 // -1 when it has not fetched in this epoch
	LastCaughtUp time.Time
}

// ReplicaView returns the leader's view; ok is false when this broker does
// not lead the partition.
func (p *Partition) ReplicaView() (v ReplicaView, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.isLocal(p.leader) || p.closed {
		return ReplicaView{}, false
	}
	v = ReplicaView{Leader: p.leader, LeaderEpoch: p.leaderEpoch, PartitionEpoch: p.partitionEpoch,
		Replicas: append([]int32{}, p.replicas...), ISR: append([]int32{}, p.isr...), Pending: p.pendingISR != nil,
		HighWatermark: p.hw, LogEndOffset: p.log.LogEndOffset(), EpochStart: p.epochStart}
	for _, r := range p.replicas {
		if f, ok := p.followers[r]; ok {
			v.Followers = append(v.Followers, FollowerView{ID: r, LogEndOffset: f.leo, LastCaughtUp: f.lastCaughtUp})
		}
	}
	return v, true
}

// BeginISRChange marks an ISR change as sent to the controller for the given
// leader and partition epochs. Until metadata brings the result (or
// AbortISRChange), the high watermark counts both ISRs' replicas, so that a
// joining replica never finds the high watermark past its log. It fails when
// the epochs moved on or a change is already pending.
func (p *Partition) BeginISRChange(leaderEpoch, partitionEpoch int32, isr []int32) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.isLocal(p.leader):
		return fmt.Errorf("%w: %s-%d is led by %d", ErrNotLeader, p.Topic, p.Index, p.leader)
	case leaderEpoch != p.leaderEpoch || partitionEpoch != p.partitionEpoch:
		return fmt.Errorf("%w: ISR change for epochs %d/%d, the partition is at %d/%d", ErrFencedLeaderEpoch,
			leaderEpoch, partitionEpoch, p.leaderEpoch, p.partitionEpoch)
	case p.pendingISR != nil:
		return fmt.Errorf("partition: %s-%d: an ISR change is already pending", p.Topic, p.Index)
	}
	p.pendingISR = append([]int32{}, isr...)
	return nil
}

// AbortISRChange forgets a pending ISR change the controller refused.
func (p *Partition) AbortISRChange() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pendingISR = nil
}

// CheckMinISR fails with ErrNotEnoughReplicas when the ISR is smaller than
// the effective min.insync.replicas, as an acks=all produce checks before
// appending.
func (p *Partition) CheckMinISR() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.underMinISRLocked() {
		return fmt.Errorf("%w: %d in sync, min.insync.replicas is %d", ErrNotEnoughReplicas, p.isrSizeLocked(), p.effectiveMinISRLocked())
	}
	return nil
}

// underMinISRLocked reports whether the committed ISR is smaller than the
// effective min.insync.replicas.
func (p *Partition) underMinISRLocked() bool {
	return p.isrSizeLocked() < p.effectiveMinISRLocked()
}

// effectiveMinISRLocked is min.insync.replicas bounded by the replication
// factor, as Kafka's effectiveMinIsr: a min.insync.replicas above the
// replica count would otherwise refuse every acks=all produce and stop the
// high watermark for good.
func (p *Partition) effectiveMinISRLocked() int {
	return min(int(p.cfg.MinInsyncReplicas), max(len(p.replicas), 1))
}

// isrSizeLocked is the ISR's size; a partition given no ISR is its own.
func (p *Partition) isrSizeLocked() int {
	if len(p.isr) == 0 {
		return 1
	}
	return len(p.isr)
}

// ErrNotEnoughReplicasAfterAppend is an acks=all produce whose batch was
// committed while the ISR was below min.insync.replicas.
var ErrNotEnoughReplicasAfterAppend = errors.New("partition: not enough in-sync replicas after append")

// Replicated reports whether everything before offset is committed (the high
// watermark passed it), as an acks=all produce waits for. Once it is, err is
// ErrNotEnoughReplicasAfterAppend when the ISR is below min.insync.replicas.
// A partition no longer led here fails with ErrNotLeader: the batch may be
// truncated by the new leader.
func (p *Partition) Replicated(offset int64) (done bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replicatedLocked(AnyEpoch, offset)
}

// ReadReplica returns whole batches from offset up to the log end offset,
// for a follower's fetch.
func (p *Partition) ReadReplica(offset int64, maxBytes int) (ReadResult, error) {
	off := p.Offsets()
	res := ReadResult{Offsets: off}
	if err := p.Offline(); err != nil {
		return res, err
	}
	if offset < off.LogStartOffset || offset > off.LogEndOffset {
		return res, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, off.LogStartOffset, off.LogEndOffset)
	}
	if offset == off.LogEndOffset {
		return res, nil
	}
	b, err := p.log.Read(offset, maxBytes, off.LogEndOffset, true)
	if err != nil {
		if errors.Is(err, log.ErrOffsetOutOfRange) {
			return res, fmt.Errorf("%w: %v", ErrOffsetOutOfRange, err)
		}
		return res, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	res.Records = b
	return res, nil
}

func containsID(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
