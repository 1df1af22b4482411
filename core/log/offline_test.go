package log

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/log/vfs/errorfs"
)

// faultEnv is a data dir on an error-injecting file system that counts the
// calls of its OnOffline callback.
type faultEnv struct {
	*env
	fs       *errorfs.FS
	offlines atomic.Int32
}

func newFaultEnv(t *testing.T, cfg Config) *faultEnv {
	t.Helper()
	fe := &faultEnv{fs: errorfs.New(vfs.Default)}
	fe.env = &env{t: t, path: t.TempDir(), clock: newClock(), warns: &warnRecorder{}, cfg: cfg, fs: fe.fs,
		onOffline: func(string, error) { fe.offlines.Add(1) }}
	fe.open()
	t.Cleanup(func() {
		if fe.dir != nil {
			fe.dir.closeLogs()
		}
	})
	return fe
}

// restart drops the dir as a crashed broker would, frees the disk and opens
// the dir again.
func (fe *faultEnv) restart() {
	fe.t.Helper()
	fe.fs.Clear()
	fe.crash()
}

func assertStorageErr(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrStorage) {
		t.Fatalf("%s: got %v, want ErrStorage", what, err)
	}
}

// assertOffline checks that every log of the dir refuses appends, reads and
// fsyncs with ErrStorage.
func (fe *faultEnv) assertOffline(t *testing.T, logs ...*Log) {
	t.Helper()
	if fe.dir.Offline() == nil {
		t.Fatal("data dir is still online after a storage error")
	}
	// OnOffline runs on a goroutine of its own.
	deadline := time.Now().Add(10 * time.Second)
	for fe.offlines.Load() == 0 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := fe.offlines.Load(); n != 1 {
		t.Fatalf("OnOffline called %d times, want 1", n)
	}
	for _, l := range logs {
		_, err := l.Append(makeBatch(t, batchSpec{ts: 1}))
		assertStorageErr(t, l.String()+" Append", err)
		assertStorageErr(t, l.String()+" Sync", l.Sync())
		_, err = l.Read(0, 1<<20, l.LogEndOffset(), true)
		assertStorageErr(t, l.String()+" Read", err)
		if l.Offline() == nil {
			t.Fatalf("%s: Offline() is nil", l)
		}
	}
}

func TestWriteEIOTakesDirOffline(t *testing.T) {
	fe := newFaultEnv(t, DefaultConfig())
	a, b := fe.log("a", 0), fe.log("b", 0)
	mustAppend(t, a, makeBatch(t, batchSpec{ts: 1}))
	mustAppend(t, b, makeBatch(t, batchSpec{ts: 1}))

	fe.fs.Add(errorfs.Rule{Ops: errorfs.OpWrite, Path: "a-0", Err: syscall.EIO, Times: 1})
	_, err := a.Append(makeBatch(t, batchSpec{ts: 2}))
	assertStorageErr(t, "Append on EIO", err)
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("Append error %v does not wrap EIO", err)
	}
	// The rule fired once; the disk "works" again, but the dir stays
	// offline, and so does the other log in it.
	fe.assertOffline(t, a, b)
	if err := fe.dir.Close(); err == nil {
		t.Fatal("Close of an offline dir succeeded")
	}
	if _, err := os.Stat(filepath.Join(fe.path, cleanShutdownFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("offline dir got a clean-shutdown marker: %v", err)
	}
}

func TestFsyncEIOIsSticky(t *testing.T) {
	fe := newFaultEnv(t, DefaultConfig())
	l := fe.log("t", 0)
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	durable := l.RecoveryPoint()
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 2}))

	// One fsync fails; the next one would succeed at the file system, as
	// Linux reports after dropping the dirty pages. It must still fail.
	fe.fs.Add(errorfs.Rule{Ops: errorfs.OpSync, Err: syscall.EIO, Times: 1})
	assertStorageErr(t, "Sync on EIO", l.Sync())
	assertStorageErr(t, "Sync after EIO", l.Sync())
	if got := l.RecoveryPoint(); got != durable {
		t.Fatalf("recovery point %d advanced past the failed fsync (durable %d)", got, durable)
	}
	fe.assertOffline(t, l)

	fe.restart()
	l, ok := fe.dir.Log("t", 0)
	if !ok {
		t.Fatal("log gone after restart")
	}
	if fe.dir.Offline() != nil {
		t.Fatal("dir still offline after restart")
	}
	if l.LogEndOffset() < durable {
		t.Fatalf("log end %d lost data below the durable offset %d", l.LogEndOffset(), durable)
	}
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 3}))
	if err := l.Sync(); err != nil {
		t.Fatalf("Sync after restart: %v", err)
	}
}

// A disk-full append fails with ErrStorage and leaves no torn tail: the short
// write is truncated away, and after a restart with space freed the log
// serves everything acknowledged and takes appends again.
func TestENOSPCAppendLeavesNoTornTail(t *testing.T) {
	fe := newFaultEnv(t, DefaultConfig())
	l := fe.log("t", 0)
	for i := 0; i < 3; i++ {
		mustAppend(t, l, makeBatch(t, batchSpec{records: 5, ts: int64(i)}))
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	leo := l.LogEndOffset()
	segs := segmentFiles(t, l.Path(), logSuffix)
	before := fileSize(t, segs[len(segs)-1])

	fe.fs.Add(errorfs.Rule{Ops: errorfs.OpWrite, Path: logSuffix, Err: syscall.ENOSPC, Partial: true})
	_, err := l.Append(makeBatch(t, batchSpec{records: 5, ts: 9}))
	assertStorageErr(t, "Append on ENOSPC", err)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append error %v does not wrap ENOSPC", err)
	}
	if fe.fs.Injected() == 0 {
		t.Fatal("no error was injected")
	}
	if got := fileSize(t, segs[len(segs)-1]); got != before {
		t.Fatalf("segment is %d bytes after the failed append, want %d (torn tail)", got, before)
	}
	if got := l.LogEndOffset(); got != leo {
		t.Fatalf("log end %d after the failed append, want %d", got, leo)
	}
	fe.assertOffline(t, l)

	fe.restart()
	l, _ = fe.dir.Log("t", 0)
	if got := l.LogEndOffset(); got != leo {
		t.Fatalf("log end %d after restart, want %d", got, leo)
	}
	if hs := readAll(t, l, 0); len(hs) != 3 {
		t.Fatalf("read %d batches after restart, want 3", len(hs))
	}
	if off := mustAppend(t, l, makeBatch(t, batchSpec{ts: 10})); off != leo {
		t.Fatalf("append after restart at %d, want %d", off, leo)
	}
}

// A short write whose truncation fails too leaves a torn tail on disk; it was
// never acknowledged, and recovery truncates it.
func TestShortWriteTornTailRecovered(t *testing.T) {
	fe := newFaultEnv(t, DefaultConfig())
	l := fe.log("t", 0)
	mustAppend(t, l, makeBatch(t, batchSpec{records: 5, ts: 1}))
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	leo := l.LogEndOffset()
	segs := segmentFiles(t, l.Path(), logSuffix)
	before := fileSize(t, segs[len(segs)-1])

	fe.fs.Add(errorfs.Rule{Ops: errorfs.OpWrite, Path: logSuffix, Err: syscall.EIO, Partial: true})
	fe.fs.Add(errorfs.Rule{Ops: errorfs.OpTruncate, Err: syscall.EIO})
	_, err := l.Append(makeBatch(t, batchSpec{records: 5, ts: 2}))
	assertStorageErr(t, "short write", err)
	if got := fileSize(t, segs[len(segs)-1]); got <= before {
		t.Fatalf("segment is %d bytes, want a torn tail past %d", got, before)
	}
	fe.assertOffline(t, l)

	fe.restart()
	l, _ = fe.dir.Log("t", 0)
	if got := l.LogEndOffset(); got != leo {
		t.Fatalf("log end %d after recovery, want %d", got, leo)
	}
	if got := fileSize(t, segs[len(segs)-1]); got != before {
		t.Fatalf("recovery left %d bytes, want %d", got, before)
	}
	if hs := readAll(t, l, 0); len(hs) != 1 {
		t.Fatalf("read %d batches after recovery, want 1", len(hs))
	}
}

// A failed checkpoint write takes the dir offline too.
func TestCheckpointEIOTakesDirOffline(t *testing.T) {
	fe := newFaultEnv(t, DefaultConfig())
	l := fe.log("t", 0)
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
	fe.fs.Add(errorfs.Rule{Ops: errorfs.OpWrite, Path: recoveryPointFile, Err: syscall.EIO, Times: 1})
	assertStorageErr(t, "Checkpoint on EIO", fe.dir.Checkpoint())
	fe.assertOffline(t, l)
	assertStorageErr(t, "Checkpoint after EIO", fe.dir.Checkpoint())
}
