package replication

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/gregorbroker/gregor/core/partition"
)

// DefaultReplicaLagTimeMax is Kafka's replica.lag.time.max.ms.
const DefaultReplicaLagTimeMax = 30 * time.Second

// Alterer commits an ISR change through the controller (Kafka's
// AlterPartition): the leader names the leader and partition epochs its view
// is based on, and the controller refuses a change from a stale view. The
// committed change reaches the partition with the next metadata image.
type Alterer interface {
	AlterPartition(ctx context.Context, topic string, partition int32, leaderEpoch, partitionEpoch int32, isr []int32) (Committed, error)
}

// Committed is a partition's state after a committed ISR change.
type Committed struct {
	Leader, LeaderEpoch, PartitionEpoch int32
	Replicas, ISR                       []int32
}

// AlterFunc adapts a function to Alterer.
type AlterFunc func(ctx context.Context, topic string, partition int32, leaderEpoch, partitionEpoch int32, isr []int32) (Committed, error)

// AlterPartition implements Alterer.
func (f AlterFunc) AlterPartition(ctx context.Context, topic string, partition int32, leaderEpoch, partitionEpoch int32, isr []int32) (Committed, error) {
	return f(ctx, topic, partition, leaderEpoch, partitionEpoch, isr)
}

// nextISR is the ISR a leader should ask for, given its view at now: ISR
// members that have not been caught up for longer than lagMax leave, and
// replicas outside it that reached the high watermark and the epoch's start
// and are caught up now join. changed is false when the ISR should stay, or
// while an earlier change is still pending.
func nextISR(v partition.ReplicaView, now time.Time, lagMax time.Duration) (isr []int32, changed bool) {
	if v.Pending {
		return nil, false
	}
	followers := make(map[int32]partition.FollowerView, len(v.Followers))
	for _, f := range v.Followers {
		followers[f.ID] = f
	}
	for _, r := range v.ISR {
		if r == v.Leader {
			isr = append(isr, r)
			continue
		}
		f, ok := followers[r]
		if ok && now.Sub(f.LastCaughtUp) <= lagMax {
			isr = append(isr, r)
		}
	}
	for _, r := range v.Replicas {
		if r == v.Leader || slices.Contains(v.ISR, r) {
			continue
		}
		f, ok := followers[r]
		if ok && f.LogEndOffset >= 0 && f.LogEndOffset >= v.HighWatermark && f.LogEndOffset >= v.EpochStart &&
			!f.LastCaughtUp.IsZero() && now.Sub(f.LastCaughtUp) <= lagMax {
			isr = append(isr, r)
		}
	}
	if !slices.Contains(isr, v.Leader) {
		// A leader is always in its own ISR.
		isr = append([]int32{v.Leader}, isr...)
	}
	if len(isr) == len(v.ISR) && sameMembers(isr, v.ISR) {
		return nil, false
	}
	return isr, true
}

func sameMembers(a, b []int32) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// ISRConfig tunes the ISR decisions.
type ISRConfig struct {
	// LagTimeMax is replica.lag.time.max.ms.
	LagTimeMax time.Duration
	// Timeout bounds one AlterPartition call.
	Timeout time.Duration
}

// DefaultISRConfig returns Kafka's defaults.
func DefaultISRConfig() ISRConfig {
	return ISRConfig{LagTimeMax: DefaultReplicaLagTimeMax, Timeout: 10 * time.Second}
}

// Validate checks the config.
func (c ISRConfig) Validate() error {
	if c.LagTimeMax <= 0 || c.Timeout <= 0 {
		return fmt.Errorf("replication: replica lag time %v and alter timeout %v must be positive", c.LagTimeMax, c.Timeout)
	}
	return nil
}

// ISR makes the ISR decisions for the partitions this broker leads.
type ISR struct {
	cfg    ISRConfig
	parts  *partition.Set
	alter  Alterer
	now    func() time.Time
	logger *slog.Logger
	poke   chan struct{} // a follower caught up: check now, not at the next tick
}

// NewISR returns the ISR decider for the partitions in parts.
func NewISR(cfg ISRConfig, parts *partition.Set, alter Alterer, now func() time.Time, logger *slog.Logger) (*ISR, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if alter == nil {
		return nil, fmt.Errorf("replication: ISR changes need an Alterer")
	}
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &ISR{cfg: cfg, parts: parts, alter: alter, now: now, logger: logger, poke: make(chan struct{}, 1)}, nil
}

// FollowerCaughtUp asks for a prompt check after a follower outside the ISR
// reached the leader; it never blocks.
func (m *ISR) FollowerCaughtUp() {
	select {
	case m.poke <- struct{}{}:
	default:
	}
}

// Check makes one pass over the partitions led here and sends the ISR
// changes they need; it returns how many were committed.
func (m *ISR) Check(ctx context.Context) int {
	n := 0
	now := m.now()
	for _, p := range m.parts.All() {
		v, ok := p.ReplicaView()
		if !ok {
			continue
		}
		isr, changed := nextISR(v, now, m.cfg.LagTimeMax)
		if !changed {
			continue
		}
		if err := m.change(ctx, p, v, isr); err != nil {
			m.logger.Warn("ISR change refused", "topic", p.Topic, "partition", p.Index, "from", v.ISR, "to", isr, "err", err)
			continue
		}
		m.logger.Info("ISR changed", "topic", p.Topic, "partition", p.Index, "from", v.ISR, "to", isr)
		n++
	}
	return n
}

func (m *ISR) change(ctx context.Context, p *partition.Partition, v partition.ReplicaView, isr []int32) error {
	if err := p.BeginISRChange(v.LeaderEpoch, v.PartitionEpoch, isr); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	c, err := m.alter.AlterPartition(ctx, p.Topic, p.Index, v.LeaderEpoch, v.PartitionEpoch, isr)
	if err != nil {
		p.AbortISRChange()
		return fmt.Errorf("replication: alter partition %s-%d: %w", p.Topic, p.Index, err)
	}
	// Apply the answer now rather than at the next metadata image; an
	// older image arriving later is ignored by its partition epoch.
	p.SetLeadershipEpochs(c.Leader, c.LeaderEpoch, c.PartitionEpoch, c.Replicas, c.ISR)
	return nil
}

// Run checks at every tick (Kafka checks every replica.lag.time.max.ms / 2)
// and whenever a follower catches up, until ctx ends.
func (m *ISR) Run(ctx context.Context, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-m.poke:
		}
		m.Check(ctx)
	}
}
