package log

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/log/vfs/errorfs"
	"github.com/gregorbroker/gregor/core/record"
)

// syncCountFS counts fsyncs of segment (.log) files.
type syncCountFS struct {
	vfs.FS
	syncs atomic.Int64
}

type syncCountFile struct {
	vfs.File
	fs *syncCountFS
}

func (c *syncCountFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &syncCountFile{File: f, fs: c}, nil
}

func (f *syncCountFile) Sync() error {
	f.fs.syncs.Add(1)
	return f.File.Sync()
}

func newSyncCountEnv(t *testing.T, cfg Config) (*env, *syncCountFS) {
	t.Helper()
	cfs := &syncCountFS{FS: vfs.Default}
	e := &env{t: t, path: t.TempDir(), clock: newClock(), warns: &warnRecorder{}, cfg: cfg, fs: cfs}
	e.open()
	t.Cleanup(func() {
		if e.dir != nil {
			e.dir.closeLogs()
		}
	})
	return e, cfs
}

func TestFlushMessagesFsyncsInAppendPath(t *testing.T) {
	for _, tc := range []struct {
		every int64
		want  []int64 // segment fsyncs after each of 6 one-record appends
	}{
		{1, []int64{1, 2, 3, 4, 5, 6}},
		{3, []int64{0, 0, 1, 1, 1, 2}},
	} {
		cfg := DefaultConfig()
		cfg.FlushMessages = tc.every
		e, cfs := newSyncCountEnv(t, cfg)
		l := e.log("t", 0)
		base := cfs.syncs.Load()
		for i, want := range tc.want {
			mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
			if got := cfs.syncs.Load() - base; got != want {
				t.Fatalf("flush.messages=%d: after append %d: %d fsyncs, want %d", tc.every, i+1, got, want)
			}
			if tc.every == 1 && l.RecoveryPoint() != int64(i+1) {
				t.Fatalf("flush.messages=1: recovery point %d after append %d", l.RecoveryPoint(), i+1)
			}
		}
		// A follower's append follows the same policy.
		b := makeBatch(t, batchSpec{ts: 1})
		record.SetBaseOffset(b, l.LogEndOffset())
		before := cfs.syncs.Load()
		if err := l.AppendReplicated(b); err != nil {
			t.Fatal(err)
		}
		if tc.every == 1 && cfs.syncs.Load() != before+1 {
			t.Fatalf("flush.messages=1: replicated append did not fsync")
		}
	}
}

func TestFlushMessagesDefaultNeverFsyncs(t *testing.T) {
	e, cfs := newSyncCountEnv(t, DefaultConfig())
	l := e.log("t", 0)
	base := cfs.syncs.Load()
	for range 10 {
		mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
	}
	if got := cfs.syncs.Load() - base; got != 0 {
		t.Fatalf("%d fsyncs with flush.messages unset", got)
	}
	if due, err := l.FlushIfDue(e.clock.Now().Add(365 * 24 * time.Hour)); due || err != nil {
		t.Fatalf("FlushIfDue with flush.ms unset = %v, %v", due, err)
	}
}

func TestFlushMsFlushesOldestUnflushedAppend(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FlushMs = 1000
	e, cfs := newSyncCountEnv(t, cfg)
	l := e.log("t", 0)
	base := cfs.syncs.Load()
	check := func(wantDue bool, wantSyncs int64) {
		t.Helper()
		due, err := l.FlushIfDue(e.clock.Now())
		if err != nil || due != wantDue {
			t.Fatalf("FlushIfDue = %v, %v; want %v", due, err, wantDue)
		}
		if got := cfs.syncs.Load() - base; got != wantSyncs {
			t.Fatalf("%d fsyncs, want %d", got, wantSyncs)
		}
	}
	check(false, 0) // nothing appended
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
	e.clock.Advance(600 * time.Millisecond)
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 1})) // not the oldest
	e.clock.Advance(399 * time.Millisecond)
	check(false, 0)
	e.clock.Advance(time.Millisecond)
	check(true, 1)
	if l.RecoveryPoint() != 2 {
		t.Fatalf("recovery point %d, want 2", l.RecoveryPoint())
	}
	e.clock.Advance(time.Hour)
	check(false, 1) // all flushed
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
	e.clock.Advance(999 * time.Millisecond)
	check(false, 1)
	e.clock.Advance(time.Millisecond)
	check(true, 2)
}

func TestFlushMsSetDynamically(t *testing.T) {
	e, cfs := newSyncCountEnv(t, DefaultConfig())
	l := e.log("t", 0)
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
	base := cfs.syncs.Load()
	cfg := DefaultConfig()
	cfg.FlushMs = 50
	l.SetConfig(cfg)
	e.clock.Advance(49 * time.Millisecond)
	if due, _ := l.FlushIfDue(e.clock.Now()); due {
		t.Fatal("flushed before flush.ms passed since the change")
	}
	e.clock.Advance(time.Millisecond)
	if due, err := l.FlushIfDue(e.clock.Now()); !due || err != nil {
		t.Fatalf("FlushIfDue = %v, %v after flush.ms", due, err)
	}
	if cfs.syncs.Load() == base {
		t.Fatal("no fsync")
	}
	cfg.FlushMessages = 2
	l.SetConfig(cfg)
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
	mid := cfs.syncs.Load()
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
	if cfs.syncs.Load() != mid+1 {
		t.Fatal("flush.messages=2 set dynamically did not fsync the second append")
	}
}

func TestFlushMessagesFsyncErrorIsStickyAndOffline(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FlushMessages = 1
	fe := newFaultEnv(t, cfg)
	l := fe.log("t", 0)
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
	fe.fs.Add(errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Err: syscall.EIO, Times: 1})
	if _, err := l.Append(makeBatch(t, batchSpec{ts: 1})); !errors.Is(err, ErrStorage) {
		t.Fatalf("append whose flush failed: %v, want ErrStorage", err)
	}
	fe.fs.Clear() // sticky: the disk works again, the log still refuses
	fe.assertOffline(t, l)
}

// TestFlushRolledAdvancesRecoveryPoint: FlushRolled fsyncs the rolled
// segments only and moves the recovery point to the active segment's base, so
// that recovery after a crash starts there (Kafka's flush after a roll).
func TestFlushRolledAdvancesRecoveryPoint(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	if err := l.FlushRolled(); err != nil {
		t.Fatal(err)
	}
	fill(t, l, 20, 2)
	segs := l.Segments()
	if len(segs) < 3 {
		t.Fatalf("%d segments, want several rolls", len(segs))
	}
	if rp := l.RecoveryPoint(); rp != 0 {
		t.Fatalf("recovery point %d before any fsync", rp)
	}
	if err := l.FlushRolled(); err != nil {
		t.Fatal(err)
	}
	activeBase := segs[len(segs)-1].BaseOffset
	if rp := l.RecoveryPoint(); rp != activeBase {
		t.Fatalf("recovery point %d after FlushRolled, want the active segment's base %d", rp, activeBase)
	}
	l.mu.RLock()
	pending := len(l.unflushed)
	l.mu.RUnlock()
	if pending != 0 {
		t.Fatalf("%d rolled segments still unflushed after FlushRolled", pending)
	}
	if err := e.dir.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// Recovery starts at the checkpointed recovery point: a damaged batch in
	// the first segment is not read again, the log end survives.
	dir := l.Path()
	p := segPath(dir, segs[0].BaseOffset, logSuffix)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[record.HeaderSize+3] ^= 0x40
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e.warns.take()
	e.crash()
	l, _ = e.dir.Log("t", 0)
	if end := l.LogEndOffset(); end != 40 {
		t.Fatalf("log end %d after the crash, want 40: recovery read segments below the recovery point", end)
	}
	for _, w := range e.warns.take() {
		if strings.Contains(w, "truncating") {
			t.Fatalf("recovery truncated below the recovery point: %s", w)
		}
	}
}
