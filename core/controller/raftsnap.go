package controller

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// snapshotStore is raft's snapshot store on a vfs.FS, in the layout and
// format of raft's FileSnapshotStore (snapshots/<term>-<index>-<ms>/ holding
// meta.json and state.bin, a CRC-64 of state.bin in meta.json), so that the
// snapshots earlier versions wrote stay readable. A failed write, fsync or
// rename of a snapshot fails the raft store (sticky, and the node stops): a
// snapshot that raft believes durable lets it delete the log behind it.
type snapshotStore struct {
	fs     vfs.FS
	dir    string // <metadata dir>/snapshots
	retain int
	store  *raftStore
	now    func() time.Time
}

var _ raft.SnapshotStore = (*snapshotStore)(nil)

const (
	snapshotsDir     = "snapshots"
	snapshotMetaFile = "meta.json"
	snapshotState    = "state.bin"
	snapshotTmp      = ".tmp"
)

// snapshotMeta is meta.json, as raft's FileSnapshotStore writes it.
type snapshotMeta struct {
	raft.SnapshotMeta
	CRC []byte
}

func newSnapshotStore(fsys vfs.FS, dir string, retain int, store *raftStore, now func() time.Time) (*snapshotStore, error) {
	s := &snapshotStore{fs: fsys, dir: filepath.Join(dir, snapshotsDir), retain: retain, store: store, now: now}
	if err := fsys.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("controller: snapshot store: %w", err)
	}
	return s, nil
}

func (s *snapshotStore) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, _ raft.Transport) (raft.SnapshotSink, error) {
	if version != 1 {
		return nil, fmt.Errorf("controller: snapshot version %d is not supported", version)
	}
	if err := s.store.Err(); err != nil {
		return nil, err
	}
	id := fmt.Sprintf("%d-%d-%d", term, index, s.now().UnixMilli())
	tmp := filepath.Join(s.dir, id+snapshotTmp)
	if err := s.fs.RemoveAll(tmp); err != nil {
		return nil, s.store.fail(err)
	}
	if err := s.fs.MkdirAll(tmp, 0o755); err != nil {
		return nil, s.store.fail(err)
	}
	f, err := s.fs.OpenFile(filepath.Join(tmp, snapshotState), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, s.store.fail(err)
	}
	sink := &snapshotSink{s: s, tmp: tmp, f: f, crc: crc64.New(crc64.MakeTable(crc64.ECMA))}
	sink.meta.SnapshotMeta = raft.SnapshotMeta{
		Version: version, ID: id, Index: index, Term: term,
		Configuration: configuration, ConfigurationIndex: configurationIndex,
	}
	sink.w = bufio.NewWriter(io.MultiWriter(f, sink.crc))
	return sink, nil
}

// List returns the retained snapshots, newest first.
func (s *snapshotStore) List() ([]*raft.SnapshotMeta, error) {
	metas, err := s.list()
	if err != nil {
		return nil, err
	}
	out := make([]*raft.SnapshotMeta, 0, min(len(metas), s.retain))
	for _, m := range metas[:min(len(metas), s.retain)] {
		out = append(out, &m.SnapshotMeta)
	}
	return out, nil
}

func (s *snapshotStore) list() ([]*snapshotMeta, error) {
	ents, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("controller: snapshot store: %w", err)
	}
	var metas []*snapshotMeta
	for _, e := range ents {
		if !e.IsDir() || strings.HasSuffix(e.Name(), snapshotTmp) {
			continue
		}
		m, err := s.readMeta(e.Name())
		if err != nil || m.Version != 1 {
			continue // an unreadable snapshot is skipped, as raft's store does
		}
		metas = append(metas, m)
	}
	sort.Slice(metas, func(i, j int) bool {
		a, b := metas[i], metas[j]
		if a.Term != b.Term {
			return a.Term > b.Term
		}
		if a.Index != b.Index {
			return a.Index > b.Index
		}
		return a.ID > b.ID
	})
	return metas, nil
}

func (s *snapshotStore) readMeta(id string) (*snapshotMeta, error) {
	b, err := vfs.ReadFile(s.fs, filepath.Join(s.dir, id, snapshotMetaFile))
	if err != nil {
		return nil, err
	}
	m := &snapshotMeta{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, err
	}
	return m, nil
}

// Open reads a snapshot whole and checks its CRC before raft restores it.
func (s *snapshotStore) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	m, err := s.readMeta(id)
	if err != nil {
		return nil, nil, fmt.Errorf("controller: snapshot %s: %w", id, err)
	}
	b, err := vfs.ReadFile(s.fs, filepath.Join(s.dir, id, snapshotState))
	if err != nil {
		return nil, nil, fmt.Errorf("controller: snapshot %s: %w", id, err)
	}
	crc := crc64.New(crc64.MakeTable(crc64.ECMA))
	crc.Write(b)
	if !bytes.Equal(crc.Sum(nil), m.CRC) {
		return nil, nil, fmt.Errorf("controller: snapshot %s: CRC mismatch", id)
	}
	return &m.SnapshotMeta, io.NopCloser(bytes.NewReader(b)), nil
}

// reap removes the snapshots beyond the retained ones.
func (s *snapshotStore) reap() error {
	metas, err := s.list()
	if err != nil {
		return err
	}
	for _, m := range metas[min(len(metas), s.retain):] {
		if err := s.fs.RemoveAll(filepath.Join(s.dir, m.ID)); err != nil {
			return err
		}
	}
	return nil
}

type snapshotSink struct {
	s    *snapshotStore
	tmp  string
	f    vfs.File
	w    *bufio.Writer
	crc  hash.Hash64
	meta snapshotMeta
	done bool
}

func (k *snapshotSink) ID() string { return k.meta.ID }

func (k *snapshotSink) Write(p []byte) (int, error) {
	n, err := k.w.Write(p)
	if err != nil {
		return n, k.s.store.fail(err)
	}
	k.meta.Size += int64(n)
	return n, nil
}

// Close makes the snapshot durable and visible: state.bin and meta.json
// fsynced, the directory renamed from its temporary name, the parent fsynced.
func (k *snapshotSink) Close() error {
	if k.done {
		return nil
	}
	k.done = true
	if err := k.finish(); err != nil {
		_ = k.s.fs.RemoveAll(k.tmp)
		return k.s.store.fail(err)
	}
	if err := k.s.reap(); err != nil {
		return k.s.store.fail(err)
	}
	return nil
}

func (k *snapshotSink) finish() error {
	err := k.w.Flush()
	if err == nil {
		err = k.f.Sync()
	}
	if cerr := k.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	k.meta.CRC = k.crc.Sum(nil)
	b, err := json.Marshal(&k.meta)
	if err != nil {
		return err
	}
	if err := vfs.WriteFileSync(k.s.fs, filepath.Join(k.tmp, snapshotMetaFile), b); err != nil {
		return err
	}
	if err := vfs.SyncDir(k.s.fs, k.tmp); err != nil {
		return err
	}
	if err := k.s.fs.Rename(k.tmp, filepath.Join(k.s.dir, k.meta.ID)); err != nil {
		return err
	}
	return vfs.SyncDir(k.s.fs, k.s.dir)
}

// Cancel drops an unfinished snapshot; raft calls it when persisting failed.
func (k *snapshotSink) Cancel() error {
	if k.done {
		return nil
	}
	k.done = true
	err := k.f.Close()
	if rerr := k.s.fs.RemoveAll(k.tmp); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = rerr
	}
	return err
}
