package partition

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/log/vfs/errorfs"
)

// A failed write, fsync or rename of a producer snapshot is sticky as a failed
// segment write is: the snapshot reports ErrStorage, the data dir goes offline
// and the partition refuses appends from then on.
func TestProducerSnapshotErrorTakesDirOffline(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule errorfs.Rule
	}{
		{"write EIO", errorfs.Rule{Ops: errorfs.OpWrite, Path: ".snapshot", Err: syscall.EIO}},
		{"write ENOSPC", errorfs.Rule{Ops: errorfs.OpWrite, Path: ".snapshot", Err: syscall.ENOSPC, Partial: true}},
		{"fsync EIO", errorfs.Rule{Ops: errorfs.OpSync, Path: ".snapshot", Err: syscall.EIO}},
		{"rename EIO", errorfs.Rule{Ops: errorfs.OpRename, Path: ".snapshot", Err: syscall.EIO}},
		{"dir fsync EIO", errorfs.Rule{Ops: errorfs.OpSync, Path: "t-0", Err: syscall.EIO, After: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			fsys := errorfs.New(nil)
			offline := make(chan string, 1)
			d, err := log.OpenDir(t.TempDir(), log.Options{
				Now: func() time.Time { return testNow }, Logger: quiet, FS: fsys,
				OnOffline: func(dir string, _ error) { offline <- dir },
			}, func(string, int32) log.Config { return cfg.Log })
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
			p.SetLeadership(1, 3, []int32{1}, []int32{1})
			if _, err := p.Append(batch(t, 3, producer(11, 2, 0))); err != nil {
				t.Fatal(err)
			}
			fsys.Add(tc.rule)
			if err := p.Snapshot(); !errors.Is(err, ErrStorage) {
				t.Fatalf("Snapshot: %v, want ErrStorage", err)
			}
			if err := d.Offline(); !errors.Is(err, log.ErrStorage) {
				t.Fatalf("data dir after a failed snapshot: %v, want offline", err)
			}
			select {
			case <-offline:
			case <-time.After(10 * time.Second):
				t.Fatal("the broker was not told the dir went offline")
			}
			fsys.Clear()
			if _, err := p.Append(batch(t, 1, producer(11, 2, 3))); !errors.Is(err, ErrStorage) {
				t.Fatalf("Append after a failed snapshot: %v, want ErrStorage", err)
			}
			if err := p.Snapshot(); !errors.Is(err, ErrStorage) {
				t.Fatalf("Snapshot after a failed snapshot: %v, want ErrStorage", err)
			}
		})
	}
}
