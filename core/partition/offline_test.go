package partition

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/log/vfs/errorfs"
)

// After a write error the partition answers ErrStorage (KAFKA_STORAGE_ERROR)
// to appends, reads, epoch checks and a waiting acks=all produce, and
// NotifyOffline wakes that waiter.
func TestOfflineLogAnswersErrStorage(t *testing.T) {
	cfg := testConfig()
	fsys := errorfs.New(nil)
	d, err := log.OpenDir(t.TempDir(), log.Options{Now: func() time.Time { return testNow }, Logger: quiet, FS: fsys},
		func(string, int32) log.Config { return cfg.Log })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	l, err := d.Create("t", 0, cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(l, [16]byte{1}, cfg, Options{Now: func() time.Time { return testNow }, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// Replicas 1 and 2: the high watermark waits for the follower.
	p.SetLeadership(1, 3, []int32{1, 2}, []int32{1, 2})
	res, err := p.Append(batch(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	waitFor := res.LastOffset + 1
	if done, err := p.Replicated(waitFor); done || err != nil {
		t.Fatalf("Replicated before the follower fetched: %v %v", done, err)
	}
	changed := p.HighWatermarkChanged()

	fsys.Add(errorfs.Rule{Ops: errorfs.OpWrite, Err: syscall.EIO, Times: 1})
	if _, err := p.Append(batch(t, 1)); !errors.Is(err, ErrStorage) {
		t.Fatalf("Append on EIO: %v, want ErrStorage", err)
	}
	p.NotifyOffline()
	select {
	case <-changed:
	default:
		t.Fatal("NotifyOffline did not wake the waiters")
	}
	if done, err := p.Replicated(waitFor); !done || !errors.Is(err, ErrStorage) {
		t.Fatalf("Replicated on an offline log: %v %v, want done with ErrStorage", done, err)
	}
	if _, err := p.Append(batch(t, 1)); !errors.Is(err, ErrStorage) {
		t.Fatalf("Append after EIO: %v, want ErrStorage", err)
	}
	if _, err := p.Read(0, 1<<20, true); !errors.Is(err, ErrStorage) {
		t.Fatalf("Read: %v, want ErrStorage", err)
	}
	if _, err := p.ReadCommitted(0, 1<<20, true); !errors.Is(err, ErrStorage) {
		t.Fatalf("ReadCommitted: %v, want ErrStorage", err)
	}
	if _, err := p.ReadReplica(0, 1<<20); !errors.Is(err, ErrStorage) {
		t.Fatalf("ReadReplica: %v, want ErrStorage", err)
	}
	if err := p.CheckEpoch(-1); !errors.Is(err, ErrStorage) {
		t.Fatalf("CheckEpoch: %v, want ErrStorage", err)
	}
	if err := p.Sync(); !errors.Is(err, ErrStorage) {
		t.Fatalf("Sync: %v, want ErrStorage", err)
	}
}
