package partition

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/record"
)

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

// openReplica opens t-<index> on node under dir as a replicated partition.
func openReplica(t *testing.T, node int32, c *clock, cfg Config) *Partition {
	t.Helper()
	d, err := log.OpenDir(t.TempDir(), log.Options{Now: c.Now, Logger: quiet}, func(string, int32) log.Config { return cfg.Log })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	l, err := d.Create("t", 0, cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(l, [16]byte{1}, cfg, Options{Now: c.Now, Logger: quiet, NodeID: node, Replicated: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func appendN(t *testing.T, p *Partition, n int) AppendResult {
	t.Helper()
	res, err := p.Append(batch(t, n))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestLeaderHighWatermark: the high watermark is the smallest log end offset
// in the ISR, waits for ISR members not yet heard from, and moves when the
// ISR shrinks.
func TestLeaderHighWatermark(t *testing.T) {
	c := &clock{t: testNow}
	p := openReplica(t, 1, c, testConfig())
	p.SetLeadershipEpochs(1, 1, 0, []int32{1, 2, 3}, []int32{1, 2, 3})
	appendN(t, p, 5)
	steps := []struct {
		name    string
		do      func() error
		wantHW  int64
		wantErr error
	}{
		{"no follower fetched yet", func() error { return nil }, 0, nil},
		{"one of two followers at the end", func() error { _, err := p.UpdateFollower(2, 5); return err }, 0, nil},
		{"the other at 3", func() error { _, err := p.UpdateFollower(3, 3); return err }, 3, nil},
		{"the other at the end", func() error { _, err := p.UpdateFollower(3, 5); return err }, 5, nil},
		{"leader appends", func() error { appendN(t, p, 2); return nil }, 5, nil},
		{"one follower catches up", func() error { _, err := p.UpdateFollower(2, 7); return err }, 5, nil},
		{"the laggard leaves the ISR", func() error {
			p.SetLeadershipEpochs(1, 1, 1, []int32{1, 2, 3}, []int32{1, 2})
			return nil
		}, 7, nil},
		{"a stranger fetches", func() error { _, err := p.UpdateFollower(9, 7); return err }, 7, ErrUnknownReplica},
	}
	for _, s := range steps {
		if err := s.do(); !errors.Is(err, s.wantErr) {
			t.Fatalf("%s: err %v, want %v", s.name, err, s.wantErr)
		}
		if hw := p.Offsets().HighWatermark; hw != s.wantHW {
			t.Fatalf("%s: high watermark %d, want %d", s.name, hw, s.wantHW)
		}
	}
}

// TestFollowerCaughtUpTime follows Kafka's rule: a follower is caught up at a
// fetch reaching the leader's end, or at its previous fetch time when it has
// reached what the leader had then.
func TestFollowerCaughtUpTime(t *testing.T) {
	c := &clock{t: testNow}
	p := openReplica(t, 1, c, testConfig())
	p.SetLeadershipEpochs(1, 1, 0, []int32{1, 2}, []int32{1})
	start := c.Now()
	caught := func() time.Time {
		v, ok := p.ReplicaView()
		if !ok {
			t.Fatal("not leader")
		}
		return v.Followers[0].LastCaughtUp
	}
	if !caught().IsZero() {
		t.Fatal("a replica outside the ISR starts caught up")
	}
	appendN(t, p, 4) // leader end 4
	c.Advance(time.Second)
	if f, _ := p.UpdateFollower(2, 0); f.CaughtUp {
		t.Fatal("behind, yet caught up")
	}
	if !caught().IsZero() {
		t.Fatal("caught-up time set while behind")
	}
	appendN(t, p, 2) // leader end 6
	c.Advance(time.Second)
	f, err := p.UpdateFollower(2, 4) // has what the leader had at its previous fetch
	if err != nil {
		t.Fatal(err)
	}
	if got := caught(); !got.Equal(start.Add(time.Second)) {
		t.Fatalf("caught up at %v, want the previous fetch %v", got, start.Add(time.Second))
	}
	if f.CaughtUp {
		t.Fatal("4 is below the high watermark 6 yet reported caught up")
	}
	c.Advance(time.Second)
	f, _ = p.UpdateFollower(2, 6)
	if got := caught(); !got.Equal(start.Add(3 * time.Second)) {
		t.Fatalf("caught up at %v, want now %v", got, start.Add(3*time.Second))
	}
	if !f.CaughtUp {
		t.Fatal("at the leader's end but not reported as caught up")
	}
}

// TestPendingISRBoundsHighWatermark: while a replica's joining is pending,
// the high watermark waits for it too.
func TestPendingISRBoundsHighWatermark(t *testing.T) {
	c := &clock{t: testNow}
	p := openReplica(t, 1, c, testConfig())
	p.SetLeadershipEpochs(1, 1, 4, []int32{1, 2}, []int32{1})
	appendN(t, p, 3)
	if _, err := p.UpdateFollower(2, 3); err != nil {
		t.Fatal(err)
	}
	if err := p.BeginISRChange(1, 3, []int32{1, 2}); !errors.Is(err, ErrFencedLeaderEpoch) {
		t.Fatalf("stale partition epoch: %v", err)
	}
	if err := p.BeginISRChange(1, 4, []int32{1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := p.BeginISRChange(1, 4, []int32{1, 2}); err == nil {
		t.Fatal("a second pending change was accepted")
	}
	appendN(t, p, 2)
	if hw := p.Offsets().HighWatermark; hw != 3 {
		t.Fatalf("high watermark %d passed the joining replica's 3", hw)
	}
	p.AbortISRChange()
	appendN(t, p, 1)
	if hw := p.Offsets().HighWatermark; hw != 6 {
		t.Fatalf("high watermark %d after the change was refused, want 6", hw)
	}
}

func TestReplicated(t *testing.T) {
	c := &clock{t: testNow}
	cfg := testConfig()
	cfg.MinInsyncReplicas = 2
	p := openReplica(t, 1, c, cfg)
	p.SetLeadershipEpochs(1, 1, 0, []int32{1, 2, 3}, []int32{1, 2, 3})
	if err := p.CheckMinISR(); err != nil {
		t.Fatal(err)
	}
	res := appendN(t, p, 2)
	next := res.LastOffset + 1
	if done, err := p.Replicated(next); done || err != nil {
		t.Fatalf("before replication: %v %v", done, err)
	}
	p.UpdateFollower(2, next)
	p.UpdateFollower(3, next)
	if done, err := p.Replicated(next); !done || err != nil {
		t.Fatalf("after replication: %v %v", done, err)
	}
	// The ISR falls below min.insync.replicas after a batch was committed
	// but before its producer looked again.
	res = appendN(t, p, 1)
	next = res.LastOffset + 1
	p.UpdateFollower(2, next)
	p.UpdateFollower(3, next)
	p.SetLeadershipEpochs(1, 1, 1, []int32{1, 2, 3}, []int32{1})
	if done, err := p.Replicated(next); !done || !errors.Is(err, ErrNotEnoughReplicasAfterAppend) {
		t.Fatalf("ISR below min: %v %v", done, err)
	}
	// A batch appended below min.insync.replicas is never committed
	// (strict min ISR), however far the former members fetch.
	res = appendN(t, p, 1)
	p.UpdateFollower(2, res.LastOffset+1)
	if done, err := p.Replicated(res.LastOffset + 1); done || err != nil {
		t.Fatalf("appended below min ISR: %v %v, want still waiting", done, err)
	}
	if err := p.CheckMinISR(); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("CheckMinISR: %v", err)
	}
	// Leadership moves away: the wait ends with NOT_LEADER.
	p.SetLeadershipEpochs(2, 2, 2, []int32{1, 2, 3}, []int32{2, 3})
	if done, err := p.Replicated(next); !done || !errors.Is(err, ErrNotLeader) {
		t.Fatalf("deposed: %v %v", done, err)
	}
}

func leaderBatches(t *testing.T, leader *Partition, from int64) []byte {
	t.Helper()
	r, err := leader.ReadReplica(from, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return r.Records
}

// TestFollowerCopiesLeader: a follower holds the leader's bytes at the
// leader's offsets and epochs, its high watermark is the leader's bounded
// by its own end, and it keeps idempotent producer state for when it leads.
func TestFollowerCopiesLeader(t *testing.T) {
	c := &clock{t: testNow}
	leader := openReplica(t, 1, c, testConfig())
	follower := openReplica(t, 2, c, testConfig())
	leader.SetLeadershipEpochs(1, 4, 0, []int32{1, 2}, []int32{1, 2})
	follower.SetLeadershipEpochs(1, 4, 0, []int32{1, 2}, []int32{1, 2})
	appendN(t, leader, 3)
	if _, err := leader.Append(batch(t, 2, producer(7, 0, 0))); err != nil {
		t.Fatal(err)
	}
	data := leaderBatches(t, leader, 0)
	// A fetch bounded by size may end in a partial batch.
	res, err := follower.AppendAsFollower(data[:len(data)-5])
	if err != nil {
		t.Fatal(err)
	}
	if res.Batches != 1 || res.LogEndOffset != 3 {
		t.Fatalf("partial response: %+v", res)
	}
	off, epoch := follower.FetchPosition()
	if off != 3 || epoch != 4 {
		t.Fatalf("fetch position %d epoch %d, want 3 epoch 4", off, epoch)
	}
	res, err = follower.AppendAsFollower(leaderBatches(t, leader, off))
	if err != nil || res.LogEndOffset != 5 {
		t.Fatalf("rest: %+v %v", res, err)
	}
	follower.SetFollowerHighWatermark(100)
	if hw := follower.Offsets().HighWatermark; hw != 5 {
		t.Fatalf("follower high watermark %d, want its end 5", hw)
	}
	follower.SetFollowerHighWatermark(2)
	if hw := follower.Offsets().HighWatermark; hw != 5 {
		t.Fatalf("follower high watermark went back to %d", hw)
	}
	// The same bytes again are out of order.
	if _, err := follower.AppendAsFollower(data); !errors.Is(err, log.ErrOffsetOrder) {
		t.Fatalf("replay: %v", err)
	}
	// The follower becomes leader: the producer's retry is a duplicate.
	follower.SetLeadershipEpochs(2, 5, 1, []int32{1, 2}, []int32{2})
	dup, err := follower.Append(batch(t, 2, producer(7, 0, 0)))
	if err != nil || !dup.Duplicate || dup.BaseOffset != 3 {
		t.Fatalf("retry on the new leader: %+v %v", dup, err)
	}
}

// TestLeaderRefusesReplicatedBatches: a fetch answered by the old leader
// after this broker was elected must not append the old leader's tail.
func TestLeaderRefusesReplicatedBatches(t *testing.T) {
	c := &clock{t: testNow}
	old := openReplica(t, 1, c, testConfig())
	elected := openReplica(t, 2, c, testConfig())
	old.SetLeadershipEpochs(1, 2, 0, []int32{1, 2}, []int32{1, 2})
	elected.SetLeadershipEpochs(1, 2, 0, []int32{1, 2}, []int32{1, 2})
	appendN(t, old, 3)
	if _, err := elected.AppendAsFollower(leaderBatches(t, old, 0)); err != nil {
		t.Fatal(err)
	}
	appendN(t, old, 2) // the old leader's unreplicated tail
	elected.SetLeadershipEpochs(2, 3, 1, []int32{1, 2}, []int32{2})
	_, err := elected.AppendAsFollower(leaderBatches(t, old, 3))
	if !errors.Is(err, ErrNotFollower) {
		t.Fatalf("append of the old leader's tail on the new leader: %v", err)
	}
	if off, epoch := elected.FetchPosition(); off != 3 || epoch != 3 {
		t.Fatalf("new leader at %d epoch %d, want 3 epoch 3 (the new epoch starts at its end)", off, epoch)
	}
	// Deposed again, it follows normally.
	elected.SetLeadershipEpochs(1, 4, 2, []int32{1, 2}, []int32{1, 2})
	if _, err := elected.AppendAsFollower(leaderBatches(t, old, 3)); err != nil {
		t.Fatalf("follower append after losing leadership: %v", err)
	}
}

func TestAppendAsFollowerRefusesCorruption(t *testing.T) {
	c := &clock{t: testNow}
	follower := openReplica(t, 2, c, testConfig())
	b := batch(t, 2)
	b[len(b)-1] ^= 0xff
	if _, err := follower.AppendAsFollower(b); !errors.Is(err, ErrCorruptMessage) {
		t.Fatalf("flipped bit: %v", err)
	}
	if leo := follower.Offsets().LogEndOffset; leo != 0 {
		t.Fatalf("corrupt batch appended, end %d", leo)
	}
}

// TestTruncateTo removes a diverged tail, its epochs and its producer state.
func TestTruncateTo(t *testing.T) {
	c := &clock{t: testNow}
	p := openReplica(t, 2, c, testConfig())
	enc := func(base int64, epoch int32, opts ...batchOpt) []byte {
		b := batch(t, 2, opts...)
		record.SetBaseOffset(b, base)
		record.SetPartitionLeaderEpoch(b, epoch)
		return b
	}
	for _, b := range [][]byte{enc(0, 1), enc(2, 1), enc(4, 2, producer(9, 0, 0))} {
		if _, err := p.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
	}
	p.SetFollowerHighWatermark(6)
	if err := p.TruncateTo(4); err != nil {
		t.Fatal(err)
	}
	off := p.Offsets()
	if off.LogEndOffset != 4 || off.HighWatermark != 4 {
		t.Fatalf("after truncation %+v", off)
	}
	if _, e := p.FetchPosition(); e != 1 {
		t.Fatalf("last epoch %d after truncating epoch 2 away, want 1", e)
	}
	if len(p.Producers()) != 0 {
		t.Fatalf("producer state of the truncated batch kept: %+v", p.Producers())
	}
}

// TestLeaderHighWatermarkStrictMinISR follows Kafka's strict min ISR
// (KIP-966): while the ISR is below min.insync.replicas the high watermark
// stays, though an acks=1 append is accepted; it moves once the ISR grows
// back or min.insync.replicas is lowered. A min.insync.replicas above the
// replication factor counts as the replication factor.
func TestLeaderHighWatermarkStrictMinISR(t *testing.T) {
	c := &clock{t: testNow}
	cfg := testConfig()
	cfg.MinInsyncReplicas = 2
	p := openReplica(t, 1, c, cfg)
	p.SetLeadershipEpochs(1, 1, 0, []int32{1, 2, 3}, []int32{1, 2, 3})
	appendN(t, p, 5)
	var caught FollowerFetch
	steps := []struct {
		name   string
		do     func() error
		wantHW int64
	}{
		{"both followers at the end", func() error {
			if _, err := p.UpdateFollower(2, 5); err != nil {
				return err
			}
			_, err := p.UpdateFollower(3, 5)
			return err
		}, 5},
		{"the ISR shrinks to the leader", func() error {
			p.SetLeadershipEpochs(1, 1, 1, []int32{1, 2, 3}, []int32{1})
			return nil
		}, 5},
		{"an acks=1 append below min ISR, unseen by consumers", func() error {
			appendN(t, p, 3)
			res, err := p.Read(5, 1<<20, true)
			if err == nil && len(res.Records) != 0 {
				err = fmt.Errorf("a consumer read %d bytes past the high watermark", len(res.Records))
			}
			return err
		}, 5},
		{"a follower outside the ISR catches up", func() error {
			var err error
			caught, err = p.UpdateFollower(2, 8)
			return err
		}, 5},
		{"it rejoins the ISR", func() error {
			p.SetLeadershipEpochs(1, 1, 2, []int32{1, 2, 3}, []int32{1, 2})
			return nil
		}, 8},
		{"it leaves again and the leader appends", func() error {
			p.SetLeadershipEpochs(1, 1, 3, []int32{1, 2, 3}, []int32{1})
			appendN(t, p, 2)
			return nil
		}, 8},
		{"min.insync.replicas lowered to 1", func() error {
			lower := cfg
			lower.MinInsyncReplicas = 1
			p.SetConfig(lower)
			return nil
		}, 10},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if hw := p.Offsets().HighWatermark; hw != s.wantHW {
			t.Fatalf("%s: high watermark %d, want %d", s.name, hw, s.wantHW)
		}
	}
	if !caught.CaughtUp {
		t.Error("a follower at the log end below min ISR is not caught up: the ISR could never grow back")
	}

	// Replication factor 1 with min.insync.replicas 2: the lone replica is
	// enough, as Kafka's effective min ISR.
	rf1 := openReplica(t, 1, c, cfg)
	rf1.SetLeadershipEpochs(1, 1, 0, []int32{1}, []int32{1})
	appendN(t, rf1, 4)
	if hw := rf1.Offsets().HighWatermark; hw != 4 {
		t.Errorf("RF=1, min.insync.replicas 2: high watermark %d, want 4", hw)
	}
	if err := rf1.CheckMinISR(); err != nil {
		t.Errorf("RF=1, min.insync.replicas 2: acks=all refused: %v", err)
	}
}
