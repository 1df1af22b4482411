package controller

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/log/vfs/errorfs"
)

// Snapshots raft's own FileSnapshotStore wrote (earlier versions) are read,
// and ours are read by it: the layout and meta.json are the same.
func TestSnapshotStoreReadsFileSnapshotStore(t *testing.T) {
	dir := t.TempDir()
	theirs, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := raft.Configuration{Servers: []raft.Server{{ID: "1", Address: "a"}}}
	_, trans := raft.NewInmemTransport("a")
	sink, err := theirs.Create(1, 10, 3, cfg, 1, trans)
	if err != nil {
		t.Fatal(err)
	}
	sink.Write([]byte("theirs"))
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	store, err := openRaftStore(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ours, err := newSnapshotStore(vfs.Default, dir, 2, store, func() time.Time { return time.Unix(1, 0) })
	if err != nil {
		t.Fatal(err)
	}
	sink, err = ours.Create(1, 20, 3, cfg, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	sink.Write([]byte("ours"))
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []raft.SnapshotStore{ours, theirs} {
		metas, err := s.List()
		if err != nil || len(metas) != 2 || metas[0].Index != 20 || metas[1].Index != 10 {
			t.Fatalf("%T List = %+v, %v", s, metas, err)
		}
		for i, want := range []string{"ours", "theirs"} {
			m, rc, err := s.Open(metas[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if !bytes.Equal(b, []byte(want)) || m.Size != int64(len(want)) || len(m.Configuration.Servers) != 1 {
				t.Fatalf("%T Open(%s) = %q %+v", s, metas[i].ID, b, m)
			}
		}
	}
}

// A failed fsync of a snapshot fails the metadata store for good and stops
// raft, as a failed fsync of the log does.
func TestControllerStopsOnSnapshotFsyncError(t *testing.T) {
	fsys := errorfs.New(nil)
	cfg := testConfig(t, t.TempDir())
	cfg.FS = fsys
	cfg.Tune = func(rc *raft.Config) { rc.TrailingLogs = 0 }
	c := openReady(t, cfg)
	register(t, c)
	fsys.Add(errorfs.Rule{Ops: errorfs.OpSync, Path: snapshotsDir, Err: syscall.EIO, Times: 1})
	if err := c.raft.Snapshot().Error(); err == nil {
		t.Fatal("snapshot succeeded on a failed fsync")
	}
	select {
	case <-c.MetadataLogFailed():
	default:
		t.Fatal("MetadataLogFailed not closed after a failed snapshot fsync")
	}
	if err := c.MetadataLogErr(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("MetadataLogErr = %v, want EIO", err)
	}
	first, _ := c.store.FirstIndex()
	if first != 1 {
		t.Fatalf("log compacted to %d behind a snapshot that failed", first)
	}
}
