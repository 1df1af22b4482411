package replication

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func TestNextISR(t *testing.T) {
	lag := 30 * time.Second
	now := t0.Add(time.Minute)
	view := func(isr []int32, hw, epochStart int64, fs ...partition.FollowerView) partition.ReplicaView {
		return partition.ReplicaView{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: isr, HighWatermark: hw,
			EpochStart: epochStart, LogEndOffset: 100, Followers: fs}
	}
	f := func(id int32, leo int64, caughtAgo time.Duration) partition.FollowerView {
		return partition.FollowerView{ID: id, LogEndOffset: leo, LastCaughtUp: now.Add(-caughtAgo)}
	}
	tests := []struct {
		name    string
		v       partition.ReplicaView
		want    []int32
		changed bool
	}{
		{"all in sync", view([]int32{1, 2, 3}, 90, 0, f(2, 100, 0), f(3, 95, 10*time.Second)), nil, false},
		{"lagging exactly the limit stays", view([]int32{1, 2, 3}, 90, 0, f(2, 100, 0), f(3, 95, lag)), nil, false},
		{"lagging past the limit leaves", view([]int32{1, 2, 3}, 90, 0, f(2, 100, 0), f(3, 95, lag+time.Millisecond)), []int32{1, 2}, true},
		{"both leave", view([]int32{1, 2, 3}, 90, 0, f(2, 10, time.Hour), f(3, 10, time.Hour)), []int32{1}, true},
		{"caught up joins", view([]int32{1, 2}, 90, 0, f(2, 100, 0), f(3, 90, 0)), []int32{1, 2, 3}, true},
		{"below the high watermark stays out", view([]int32{1, 2}, 90, 0, f(2, 100, 0), f(3, 89, 0)), nil, false},
		{"below this epoch's start stays out", view([]int32{1, 2}, 90, 95, f(2, 100, 0), f(3, 92, 0)), nil, false},
		{"never fetched stays out", view([]int32{1, 2}, 0, 0, f(2, 100, 0), partition.FollowerView{ID: 3, LogEndOffset: -1}), nil, false},
		{"one leaves, another joins", view([]int32{1, 2}, 50, 0, f(2, 40, time.Hour), f(3, 100, 0)), []int32{1, 3}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := nextISR(tt.v, now, lag)
			if changed != tt.changed || !slices.Equal(got, tt.want) {
				t.Fatalf("got %v %v, want %v %v", got, changed, tt.want, tt.changed)
			}
		})
	}
	pending := view([]int32{1, 2, 3}, 90, 0, f(2, 100, time.Hour), f(3, 100, time.Hour))
	pending.Pending = true
	if _, changed := nextISR(pending, now, lag); changed {
		t.Fatal("a change was proposed while one is pending")
	}
}

// clock is an injected clock advanced by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fakeController records AlterPartition calls and commits or refuses them.
type fakeController struct {
	mu     sync.Mutex
	calls  [][]int32
	refuse error
	parts  *partition.Set
}

func (c *fakeController) AlterPartition(_ context.Context, topic string, idx int32, leaderEpoch, partitionEpoch int32, isr []int32) (Committed, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, append([]int32{}, isr...))
	if c.refuse != nil {
		return Committed{}, c.refuse
	}
	p, _ := c.parts.Get(topic, idx)
	r := p.Replication()
	return Committed{Leader: r.Leader, LeaderEpoch: leaderEpoch, PartitionEpoch: partitionEpoch + 1, Replicas: r.Replicas, ISR: isr}, nil
}

func openPartition(t *testing.T, node int32, c *clock) *partition.Partition {
	t.Helper()
	lc := log.DefaultConfig()
	d, err := log.OpenDir(t.TempDir(), log.Options{Now: c.Now, Logger: quiet}, func(string, int32) log.Config { return lc })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	l, err := d.Create("t", 0, lc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := partition.New(l, [16]byte{7}, partition.Config{Log: lc, MaxMessageBytes: 1 << 20, TimestampBeforeMaxMs: -1,
		TimestampAfterMaxMs: -1, MinInsyncReplicas: 2}, partition.Options{Now: c.Now, Logger: quiet, NodeID: node, Replicated: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func testBatch(t *testing.T, n int) []byte {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Value: []byte("v")}
	}
	b, err := record.Encode(record.BatchSpec{FirstTimestamp: t0.UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestISRShrinkAndExpand drives a leader's ISR through the controller with an
// injected clock: a silent follower leaves after replica.lag.time.max.ms,
// comes back when it catches up, and a refused change is retried.
func TestISRShrinkAndExpand(t *testing.T) {
	c := &clock{t: t0}
	p := openPartition(t, 1, c)
	p.SetLeadershipEpochs(1, 3, 0, []int32{1, 2, 3}, []int32{1, 2, 3})
	set := partition.NewSet()
	set.Put(p)
	ctrl := &fakeController{parts: set}
	m, err := NewISR(ISRConfig{LagTimeMax: 30 * time.Second, Timeout: time.Second}, set, ctrl, c.Now, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.Append(testBatch(t, 4)); err != nil {
		t.Fatal(err)
	}
	isr := func() []int32 { return p.Replication().ISR }
	// Follower 2 keeps up; 3 never fetches.
	for i := 0; i < 3; i++ {
		c.Advance(10 * time.Second)
		p.UpdateFollower(2, 4)
		m.Check(ctx)
	}
	if got := isr(); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("ISR %v changed before the lag limit", got)
	}
	if hw := p.Offsets().HighWatermark; hw != 0 {
		t.Fatalf("high watermark %d moved without 3", hw)
	}
	c.Advance(time.Second)
	p.UpdateFollower(2, 4)
	if n := m.Check(ctx); n != 1 || !slices.Equal(isr(), []int32{1, 2}) {
		t.Fatalf("after 31 s: %d changes, ISR %v, want [1 2]", n, isr())
	}
	if hw := p.Offsets().HighWatermark; hw != 4 {
		t.Fatalf("high watermark %d after the shrink, want 4", hw)
	}
	// 3 catches up, but the controller refuses once.
	ctrl.refuse = errors.New("stale partition epoch")
	if f, _ := p.UpdateFollower(3, 4); !f.CaughtUp {
		t.Fatal("3 at the end is not reported caught up")
	}
	if n := m.Check(ctx); n != 0 || !slices.Equal(isr(), []int32{1, 2}) {
		t.Fatalf("refused change applied: ISR %v", isr())
	}
	ctrl.refuse = nil
	if n := m.Check(ctx); n != 1 || !slices.Equal(isr(), []int32{1, 2, 3}) {
		t.Fatalf("retry: ISR %v, want [1 2 3]", isr())
	}
	if len(ctrl.calls) != 3 {
		t.Fatalf("controller saw %v", ctrl.calls)
	}
}
