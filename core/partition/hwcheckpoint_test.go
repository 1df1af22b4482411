package partition

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/record"
)

// replicaDir is one broker's data dir holding t-0, opened and reopened as a
// restart would.
type replicaDir struct {
	t          *testing.T
	path       string
	node       int32
	c          *clock
	replicated bool
	dir        *log.Dir
	p          *Partition
}

func newReplicaDir(t *testing.T, node int32, c *clock, replicated bool) *replicaDir {
	r := &replicaDir{t: t, path: t.TempDir(), node: node, c: c, replicated: replicated}
	r.open()
	return r
}

func (r *replicaDir) open() {
	r.t.Helper()
	cfg := testConfig()
	d, err := log.OpenDir(r.path, log.Options{Now: r.c.Now, Logger: quiet}, func(string, int32) log.Config { return cfg.Log })
	if err != nil {
		r.t.Fatal(err)
	}
	l, err := d.Create("t", 0, cfg.Log)
	if err != nil {
		r.t.Fatal(err)
	}
	p, err := New(l, [16]byte{1}, cfg, Options{Now: r.c.Now, Logger: quiet, NodeID: r.node, Replicated: r.replicated})
	if err != nil {
		r.t.Fatal(err)
	}
	r.dir, r.p = d, p
	r.t.Cleanup(func() {
		p.Close()
		d.Close()
	})
}

// restart stops the broker cleanly (its high watermarks are written at
// shutdown) and opens the data dir again.
func (r *replicaDir) restart() {
	r.t.Helper()
	if err := r.p.Close(); err != nil {
		r.t.Fatal(err)
	}
	if err := r.dir.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.open()
}

// crash is a kill -9: the next start sees the files as they are now, so
// only what the last periodic checkpoint wrote. The running instance is
// left to the test's cleanup; the copy is what restarts.
func (r *replicaDir) crash() {
	r.t.Helper()
	to := r.t.TempDir()
	err := filepath.WalkDir(r.path, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.path, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		r.t.Fatal(err)
	}
	r.path = to
	r.open()
}

// visible is the end of what a consumer can read: the last offset Read
// returns plus one, or the start when it returns nothing.
func visible(t *testing.T, p *Partition) int64 {
	t.Helper()
	res, err := p.Read(0, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	end := int64(0)
	it := record.Batches(res.Records)
	for it.Next() {
		end = it.Header().LastOffset() + 1
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return end
}

// TestRestartKeepsHighWatermark: a replicated leader restarted with records
// its ISR never confirmed starts at the checkpointed high watermark, shows
// consumers nothing above it, and moves it only as the ISR confirms.
func TestRestartKeepsHighWatermark(t *testing.T) {
	tests := []struct {
		name string
		// stop is how the broker goes down.
		stop func(r *replicaDir)
		// checkpointed is the high watermark the restart finds.
		checkpointed int64
		// isr after the restart, the leader first.
		isr    []int32
		wantHW int64
	}{
		// The periodic checkpoint saw HW 3; the move to 5 was lost.
		{"crash after the periodic checkpoint", func(r *replicaDir) { r.crash() }, 3, []int32{1, 2}, 3},
		{"clean shutdown", func(r *replicaDir) { r.restart() }, 5, []int32{1, 2}, 5},
		// Alone in the ISR the leader commits its whole log, as Kafka does.
		{"alone in the ISR", func(r *replicaDir) { r.crash() }, 3, []int32{1}, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: testNow}
			r := newReplicaDir(t, 1, c, true)
			r.p.SetLeadershipEpochs(1, 1, 0, []int32{1, 2}, []int32{1, 2})
			appendN(t, r.p, 3)
			appendN(t, r.p, 2)
			appendN(t, r.p, 4)
			if _, err := r.p.UpdateFollower(2, 3); err != nil {
				t.Fatal(err)
			}
			if err := r.dir.CheckpointHighWatermarks(); err != nil {
				t.Fatal(err)
			}
			if _, err := r.p.UpdateFollower(2, 5); err != nil {
				t.Fatal(err)
			}
			tt.stop(r)

			got := r.p.Offsets()
			if got.LogEndOffset != 9 || got.HighWatermark > got.LogEndOffset {
				t.Fatalf("after restart %+v", got)
			}
			if got.HighWatermark != tt.checkpointed {
				t.Fatalf("high watermark after restart %d, want the checkpointed %d", got.HighWatermark, tt.checkpointed)
			}
			r.p.SetLeadershipEpochs(1, 2, 1, []int32{1, 2}, tt.isr)
			if hw := r.p.Offsets().HighWatermark; hw != tt.wantHW {
				t.Fatalf("high watermark as leader %d, want %d", hw, tt.wantHW)
			}
			if v := visible(t, r.p); v != tt.wantHW {
				t.Fatalf("consumers see up to %d, want %d", v, tt.wantHW)
			}
			// The follower confirms everything: now it is committed.
			if _, err := r.p.UpdateFollower(2, 9); err != nil {
				t.Fatal(err)
			}
			if hw := r.p.Offsets().HighWatermark; hw != 9 {
				t.Fatalf("high watermark after the ISR confirmed %d, want 9", hw)
			}
		})
	}
}

// TestFollowerRestartedMidReplication: a follower that copied records past
// the leader's high watermark, then crashed, does not expose them when it
// becomes leader with another replica in the ISR; they become visible only
// once that replica has them.
func TestFollowerRestartedMidReplication(t *testing.T) {
	c := &clock{t: testNow}
	leader := openReplica(t, 1, c, testConfig())
	f := newReplicaDir(t, 2, c, true)
	leader.SetLeadershipEpochs(1, 1, 0, []int32{1, 2, 3}, []int32{1, 2, 3})
	f.p.SetLeadershipEpochs(1, 1, 0, []int32{1, 2, 3}, []int32{1, 2, 3})
	appendN(t, leader, 2)
	appendN(t, leader, 2)
	// Both followers copy the first 4 records: the high watermark is 4.
	if _, err := f.p.AppendAsFollower(leaderBatches(t, leader, 0)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{2, 3} {
		if _, err := leader.UpdateFollower(id, 4); err != nil {
			t.Fatal(err)
		}
	}
	appendN(t, leader, 3)
	// The follower's next fetch brings the HW of 4 and 3 more records.
	ff, err := leader.UpdateFollower(2, 4)
	if err != nil || ff.HighWatermark != 4 {
		t.Fatalf("follower fetch: %+v %v", ff, err)
	}
	f.p.SetFollowerHighWatermark(ff.HighWatermark)
	if _, err := f.p.AppendAsFollower(leaderBatches(t, leader, 4)); err != nil {
		t.Fatal(err)
	}
	if err := f.dir.CheckpointHighWatermarks(); err != nil {
		t.Fatal(err)
	}
	f.crash()

	if got := f.p.Offsets(); got.LogEndOffset != 7 || got.HighWatermark != 4 {
		t.Fatalf("restarted follower %+v, want end 7 and high watermark 4", got)
	}
	if v := visible(t, f.p); v != 4 {
		t.Fatalf("restarted follower shows up to %d, want 4", v)
	}
	// The old leader is gone; the follower leads with replica 3 in the ISR,
	// which has not fetched in the new epoch.
	f.p.SetLeadershipEpochs(2, 2, 1, []int32{1, 2, 3}, []int32{2, 3})
	if hw := f.p.Offsets().HighWatermark; hw != 4 {
		t.Fatalf("new leader's high watermark %d, want the old 4", hw)
	}
	if v := visible(t, f.p); v != 4 {
		t.Fatalf("new leader shows up to %d, want 4", v)
	}
	if done, err := f.p.Replicated(7); done || err != nil {
		t.Fatalf("records past the old high watermark count as replicated: %v %v", done, err)
	}
	if _, err := f.p.UpdateFollower(3, 7); err != nil {
		t.Fatal(err)
	}
	if v := visible(t, f.p); v != 7 {
		t.Fatalf("after replica 3 caught up consumers see up to %d, want 7", v)
	}
}

// TestInitialHighWatermark covers where a partition's high watermark starts
// and what it records for the checkpoint.
func TestInitialHighWatermark(t *testing.T) {
	tests := []struct {
		name         string
		replicated   bool
		checkpointed int64 // -1: no entry
		logStart     int64
		want         int64
	}{
		{"not replicated ignores the checkpoint", false, 2, 0, 6},
		{"not replicated without a checkpoint", false, -1, 0, 6},
		{"replicated takes the checkpoint", true, 2, 0, 2},
		{"replicated bounded by the log end", true, 40, 0, 6},
		{"replicated without a checkpoint starts at the log start", true, -1, 3, 3},
		{"replicated raised to the log start", true, 1, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: testNow}
			r := newReplicaDir(t, 1, c, false)
			appendN(t, r.p, 3)
			appendN(t, r.p, 3)
			if tt.logStart > 0 {
				if err := r.p.Log().DeleteRecordsBefore(tt.logStart); err != nil {
					t.Fatal(err)
				}
			}
			r.p.Log().SetHighWatermark(tt.checkpointed)
			r.replicated = tt.replicated
			// A crash keeps the checkpoints exactly as written here.
			if err := r.dir.Checkpoint(); err != nil {
				t.Fatal(err)
			}
			r.crash()
			if hw := r.p.Offsets().HighWatermark; hw != tt.want {
				t.Fatalf("high watermark %d, want %d", hw, tt.want)
			}
			if hw, ok := r.p.Log().HighWatermark(); !ok || hw != tt.want {
				t.Fatalf("recorded high watermark %d %v, want %d", hw, ok, tt.want)
			}
		})
	}
}

// TestTruncationRecordsHighWatermark: truncation and a reset past the log
// end move the recorded high watermark with the partition's.
func TestTruncationRecordsHighWatermark(t *testing.T) {
	c := &clock{t: testNow}
	r := newReplicaDir(t, 2, c, true)
	leader := openReplica(t, 1, c, testConfig())
	leader.SetLeadershipEpochs(1, 1, 0, []int32{1, 2}, []int32{1})
	appendN(t, leader, 4)
	appendN(t, leader, 4)
	if _, err := r.p.AppendAsFollower(leaderBatches(t, leader, 0)); err != nil {
		t.Fatal(err)
	}
	r.p.SetFollowerHighWatermark(8)
	steps := []struct {
		name string
		do   func() error
		want int64
	}{
		{"truncate below the high watermark", func() error { return r.p.TruncateTo(4) }, 4},
		{"reset past the log end", func() error { return r.p.ResetTo(20) }, 20},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if hw := r.p.Offsets().HighWatermark; hw != s.want {
			t.Fatalf("%s: high watermark %d, want %d", s.name, hw, s.want)
		}
		if hw, ok := r.p.Log().HighWatermark(); !ok || hw != s.want {
			t.Fatalf("%s: recorded %d %v, want %d", s.name, hw, ok, s.want)
		}
	}
}
