package group

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/partition"
)

// replicatedEnv is a coordinator over one __consumer_offsets partition led
// by node 1 with followers 2 and 3 and min.insync.replicas 2: nothing is
// committed until the test reports follower fetches.
type replicatedEnv struct {
	t *testing.T
	p *partition.Partition
	c *Coordinator
}

func newReplicatedEnv(t *testing.T, writeTimeout time.Duration) *replicatedEnv {
	t.Helper()
	lc := log.DefaultConfig()
	d, err := log.OpenDir(t.TempDir(), log.Options{Logger: quiet}, func(string, int32) log.Config { return lc })
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Create(OffsetsTopic, 0, lc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := partition.New(l, [16]byte{9}, partition.Config{Log: lc, MaxMessageBytes: 1 << 20,
		TimestampBeforeMaxMs: -1, TimestampAfterMaxMs: -1, MinInsyncReplicas: 2},
		partition.Options{Logger: quiet, NodeID: 1, Replicated: true})
	if err != nil {
		t.Fatal(err)
	}
	p.SetLeadership(1, 1, []int32{1, 2, 3}, []int32{1, 2, 3})
	cfg := testConfig()
	cfg.WriteTimeout = writeTimeout
	c := New(cfg, Options{Clock: NewManualClock(testStart), Logger: quiet})
	t.Cleanup(func() {
		c.Close()
		p.Close()
		d.Close()
	})
	c.Assign(1, map[int32]Leader{0: {Partition: p, Epoch: 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
	return &replicatedEnv{t: t, p: p, c: c}
}

// replicate has both followers fetch up to the log end offset.
func (e *replicatedEnv) replicate() {
	leo := e.p.Offsets().LogEndOffset
	for _, r := range []int32{2, 3} {
		if _, err := e.p.UpdateFollower(r, leo); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *replicatedEnv) fetched(tp TopicPartition) int64 {
	e.t.Helper()
	got, err := e.c.FetchOffsets(FetchRequest{Group: "g", Partitions: []TopicPartition{tp}})
	if err != nil {
		e.t.Fatal(err)
	}
	return got[0].Offset.Offset
}

func commitReq(off int64) CommitRequest {
	return CommitRequest{Group: "g", Generation: -1, RetentionMs: -1,
		Partitions: []CommitPartition{{TopicPartition: TopicPartition{Topic: "t", Partition: 0}, Offset: off, LeaderEpoch: -1}}}
}

// TestCommitWaitsForISR: an offset commit is acknowledged, and visible to
// OffsetFetch, only once the followers have it; one they never fetch is
// COORDINATOR_NOT_AVAILABLE after the write timeout and never shown.
func TestCommitWaitsForISR(t *testing.T) {
	e := newReplicatedEnv(t, 300*time.Millisecond)
	tp := TopicPartition{Topic: "t", Partition: 0}
	before := e.p.Offsets().LogEndOffset
	if _, err := e.c.CommitOffsets(commitReq(7)); !errors.Is(err, ErrCoordinatorNotAvailable) {
		t.Fatalf("commit with followers that never fetch: %v, want ErrCoordinatorNotAvailable", err)
	}
	if off := e.p.Offsets().LogEndOffset; off == before {
		t.Fatal("the commit was not appended to the leader's log")
	}
	if got := e.fetched(tp); got != -1 {
		t.Fatalf("OffsetFetch shows %d before the commit was replicated, want -1", got)
	}

	// A commit the followers take is acknowledged and visible.
	e.replicate()
	before = e.p.Offsets().LogEndOffset
	done := make(chan error, 1)
	go func() {
		_, err := e.c.CommitOffsets(commitReq(9))
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for e.p.Offsets().LogEndOffset == before {
		if time.Now().After(deadline) {
			t.Fatal("the commit was never appended")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("commit answered (%v) before the followers had it", err)
	default:
	}
	e.replicate()
	if err := <-done; err != nil {
		t.Fatalf("replicated commit: %v", err)
	}
	if got := e.fetched(tp); got != 9 {
		t.Fatalf("OffsetFetch shows %d after the commit was replicated, want 9", got)
	}
}

// TestCommitLosesLeadership: a commit waiting for the ISR when this broker
// stops leading the partition is NOT_COORDINATOR, and not applied.
func TestCommitLosesLeadership(t *testing.T) {
	e := newReplicatedEnv(t, time.Minute)
	before := e.p.Offsets().LogEndOffset
	done := make(chan error, 1)
	go func() {
		_, err := e.c.CommitOffsets(commitReq(5))
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for e.p.Offsets().LogEndOffset == before {
		if time.Now().After(deadline) {
			t.Fatal("the commit was never appended")
		}
		time.Sleep(time.Millisecond)
	}
	e.p.SetLeadership(2, 2, []int32{1, 2, 3}, []int32{2, 3})
	if err := <-done; !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("commit after losing leadership: %v, want ErrNotCoordinator", err)
	}
}

// TestCommitNotEnoughReplicas: with the ISR below min.insync.replicas a
// commit appends nothing and is COORDINATOR_NOT_AVAILABLE.
func TestCommitNotEnoughReplicas(t *testing.T) {
	e := newReplicatedEnv(t, time.Minute)
	e.p.SetLeadership(1, 1, []int32{1, 2, 3}, []int32{1})
	before := e.p.Offsets().LogEndOffset
	if _, err := e.c.CommitOffsets(commitReq(5)); !errors.Is(err, ErrCoordinatorNotAvailable) {
		t.Fatalf("commit with ISR [1]: %v, want ErrCoordinatorNotAvailable", err)
	}
	if off := e.p.Offsets().LogEndOffset; off != before {
		t.Fatalf("log end moved %d -> %d: the commit was appended", before, off)
	}
}

// TestLoadWaitsForHighWatermark: a new coordinator loads no record the ISR
// has not taken: it answers COORDINATOR_LOAD_IN_PROGRESS until what its log
// held when it became leader is committed, then loads all of it.
func TestLoadWaitsForHighWatermark(t *testing.T) {
	e := newReplicatedEnv(t, 100*time.Millisecond)
	tp := TopicPartition{Topic: "t", Partition: 0}
	if _, err := e.c.CommitOffsets(commitReq(3)); !errors.Is(err, ErrCoordinatorNotAvailable) {
		t.Fatalf("unreplicated commit: %v, want ErrCoordinatorNotAvailable", err)
	}
	// A new leader epoch on this broker: the uncommitted record is in its log.
	e.p.SetLeadership(1, 2, []int32{1, 2, 3}, []int32{1, 2, 3})
	e.c.Assign(1, map[int32]Leader{0: {Partition: e.p, Epoch: 2}})
	if _, err := e.c.FetchOffsets(FetchRequest{Group: "g", Partitions: []TopicPartition{tp}}); !errors.Is(err, ErrCoordinatorLoadInProgress) {
		t.Fatalf("fetch before the log is committed: %v, want ErrCoordinatorLoadInProgress", err)
	}
	e.replicate()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.c.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.fetched(tp); got != 3 {
		t.Fatalf("loaded coordinator shows %d, want 3 (committed by the new epoch)", got)
	}
}
