package controller

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/log/vfs/errorfs"
)

func storeLogs(t *testing.T, s *raftStore, from, to uint64) {
	t.Helper()
	var logs []*raft.Log
	for i := from; i <= to; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 2, Type: raft.LogCommand, Data: []byte{byte(i)}, AppendedAt: time.Unix(0, int64(i))})
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
}

func checkRange(t *testing.T, s *raftStore, first, last uint64) {
	t.Helper()
	f, _ := s.FirstIndex()
	l, _ := s.LastIndex()
	if f != first || l != last {
		t.Fatalf("range %d-%d, want %d-%d", f, l, first, last)
	}
	for i := first; first != 0 && i <= last; i++ {
		var got raft.Log
		if err := s.GetLog(i, &got); err != nil || got.Index != i || got.Term != 2 || len(got.Data) != 1 || got.Data[0] != byte(i) || got.AppendedAt.UnixNano() != int64(i) {
			t.Fatalf("GetLog(%d) = %+v, %v", i, got, err)
		}
	}
}

// The store reads back what it wrote, drops a torn tail, applies deleted
// ranges and survives the rewrite that drops dead records.
func TestRaftStoreReopens(t *testing.T) {
	dir := t.TempDir()
	s, err := openRaftStore(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get([]byte("CurrentTerm")); err == nil || err.Error() != "not found" {
		t.Fatalf("Get of a missing key: %v, want raft's \"not found\"", err)
	}
	storeLogs(t, s, 1, 4000)
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(1, 3500); err != nil {
		t.Fatal(err)
	}
	if s.records != 501 {
		t.Fatalf("%d records after deleting 3500 of 4000 entries, want the 501 live ones rewritten", s.records)
	}
	if err := s.DeleteRange(3901, 4000); err != nil {
		t.Fatal(err)
	}
	storeLogs(t, s, 3901, 3950)
	s.Close()

	// A torn last record, as a crash mid-write leaves.
	path := filepath.Join(dir, raftStoreName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0, 0, 0, 40, 1, 2, 3})
	f.Close()

	s, err = openRaftStore(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkRange(t, s, 3501, 3950)
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 7 {
		t.Fatalf("CurrentTerm = %d, %v", v, err)
	}
	storeLogs(t, s, 3951, 3952)
	checkRange(t, s, 3501, 3952)
}

// A failed write or fsync of the raft store is sticky: later writes fail
// even once the disk answers again, and Failed is closed.
func TestRaftStoreFailureIsSticky(t *testing.T) {
	for _, op := range []errorfs.Op{errorfs.OpWrite, errorfs.OpSync} {
		fsys := errorfs.New(nil)
		s, err := openRaftStore(fsys, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		storeLogs(t, s, 1, 2)
		fsys.Add(errorfs.Rule{Ops: op, Path: raftStoreName, Err: syscall.EIO, Times: 1})
		if err := s.StoreLogs([]*raft.Log{{Index: 3, Term: 2}}); !errors.Is(err, syscall.EIO) {
			t.Fatalf("op %v: StoreLogs: %v, want EIO", op, err)
		}
		select {
		case <-s.Failed():
		default:
			t.Fatalf("op %v: Failed not closed", op)
		}
		if err := s.SetUint64([]byte("CurrentTerm"), 3); !errors.Is(err, syscall.EIO) {
			t.Fatalf("op %v: SetUint64 after the failure: %v, want the sticky EIO", op, err)
		}
		if err := s.DeleteRange(1, 1); !errors.Is(err, syscall.EIO) {
			t.Fatalf("op %v: DeleteRange after the failure: %v, want the sticky EIO", op, err)
		}
		checkRange(t, s, 1, 2)
		s.Close()
	}
}

// An fsync error on the metadata log stops the controller's raft (Kafka's
// controller exits on a metadata log write failure) instead of answering
// the next write as if nothing happened; after a restart on a healthy disk
// the metadata committed before the failure is there.
func TestControllerStopsOnMetadataLogFsyncError(t *testing.T) {
	dir := t.TempDir()
	fsys := errorfs.New(nil)
	cfg := testConfig(t, dir)
	cfg.FS = fsys
	c := openReady(t, cfg)
	register(t, c)
	mustCreate(t, c, CreateTopic{Name: "before", NumPartitions: 1, ReplicationFactor: 1})

	fsys.Add(errorfs.Rule{Ops: errorfs.OpSync, Path: raftStoreName, Err: syscall.EIO, Times: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := c.CreateTopics(ctx, []CreateTopic{{Name: "during", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if res[0].Err == nil {
		t.Fatal("CreateTopics succeeded on a failed fsync of the metadata log")
	}
	select {
	case <-c.MetadataLogFailed():
	case <-ctx.Done():
		t.Fatal("MetadataLogFailed not closed")
	}
	if err := c.MetadataLogErr(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("MetadataLogErr = %v, want EIO", err)
	}
	// The rule is spent: the disk would answer again, the store must not.
	res = c.CreateTopics(ctx, []CreateTopic{{Name: "after", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if res[0].Err == nil {
		t.Fatal("CreateTopics succeeded after the metadata log failed")
	}
	if err := c.Close(); err != nil && !errors.Is(err, syscall.EIO) && !errors.Is(err, raft.ErrRaftShutdown) {
		t.Logf("Close: %v", err)
	}

	cfg.FS = vfs.Default
	c2 := openReady(t, cfg)
	if _, ok := c2.Image().Topic("before"); !ok {
		t.Fatal("topic committed before the failure is missing after a restart")
	}
	if _, ok := c2.Image().Topic("after"); ok {
		t.Fatal("topic refused after the failure exists after a restart")
	}
}

// A raft.db of an earlier version is migrated into the raft store once, and
// the metadata it held survives.
func TestMigrateBoltStore(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	c := openReady(t, cfg)
	register(t, c)
	mustCreate(t, c, CreateTopic{Name: "m", NumPartitions: 2, ReplicationFactor: 1})
	c.Close()
	// Turn the store back into a raft.db as earlier versions wrote it.
	s, err := openRaftStore(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	writeBoltCopy(t, s, filepath.Join(dir, legacyStoreName))
	s.Close()
	if err := os.Remove(filepath.Join(dir, raftStoreName)); err != nil {
		t.Fatal(err)
	}

	c2 := openReady(t, cfg)
	if tp, ok := c2.Image().Topic("m"); !ok || len(tp.Partitions) != 2 {
		t.Fatalf("topic after migration: %+v %v", tp, ok)
	}
	if _, err := os.Stat(filepath.Join(dir, legacyStoreName+".migrated")); err != nil {
		t.Fatalf("raft.db not renamed after migration: %v", err)
	}
}

func register(t *testing.T, c *Controller) {
	t.Helper()
	if err := c.RegisterBroker(context.Background(), Broker{NodeID: 1, Host: "localhost", Port: 9091}); err != nil {
		t.Fatal(err)
	}
}

// writeBoltCopy writes s's entries and stable keys to a raft-boltdb store.
func writeBoltCopy(t *testing.T, s *raftStore, path string) {
	t.Helper()
	bs, err := raftboltdb.NewBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Close()
	for _, k := range raftStableKeys {
		if v, err := s.Get([]byte(k)); err == nil {
			if err := bs.Set([]byte(k), v); err != nil {
				t.Fatal(err)
			}
		}
	}
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	for i := first; i <= last; i++ {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil {
			t.Fatal(err)
		}
		if err := bs.StoreLog(&l); err != nil {
			t.Fatal(err)
		}
	}
}

// A bad record with records after it is corruption of what the store
// acknowledged: it refuses to open instead of cutting the terms, votes and
// entries behind it. A bad last record is a torn append and is cut.
func TestRaftStoreRefusesCorruptionBeforeTheTail(t *testing.T) {
	dir := t.TempDir()
	s, err := openRaftStore(vfs.Default, dir)
	if err != nil {
		t.Fatal(err)
	}
	storeLogs(t, s, 1, 10)
	if err := s.SetUint64([]byte("CurrentTerm"), 3); err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := filepath.Join(dir, raftStoreName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	bad := append([]byte(nil), good...)
	bad[recHeader+2] ^= 0xff // inside the first record's body
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openRaftStore(vfs.Default, dir); !errors.Is(err, ErrCorruptMetadataLog) {
		t.Fatalf("open with its first record damaged: %v, want ErrCorruptMetadataLog", err)
	}
	if after, _ := os.ReadFile(path); len(after) != len(bad) {
		t.Fatalf("the damaged store was truncated from %d to %d bytes", len(bad), len(after))
	}

	torn := append([]byte(nil), good...)
	torn[len(torn)-1] ^= 0xff // inside the last record (the term)
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = openRaftStore(vfs.Default, dir)
	if err != nil {
		t.Fatalf("open with its last record torn: %v", err)
	}
	defer s.Close()
	checkRange(t, s, 1, 10)
	if _, err := s.GetUint64([]byte("CurrentTerm")); err == nil {
		t.Fatal("the torn last write is still there")
	}
}
