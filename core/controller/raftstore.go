package controller

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// raftStoreName is the controller's raft log and stable store in the
// metadata dir.
const raftStoreName = "raft.log"

// errKeyNotFound is what raft expects of a stable store for a key never set
// (it compares the error's text, as raft-boltdb's and raft's own stores
// answer).
var errKeyNotFound = errors.New("not found")

// ErrCorruptMetadataLog is a raft store damaged before its last record: the
// node does not start on it (restore the metadata dir from another voter).
var ErrCorruptMetadataLog = errors.New("controller: corrupt metadata log")

// raftStore is the metadata quorum's raft log and stable store: one
// append-only file of CRC-checked records (a log entry, a stable key's new
// value, a deleted range of entries) written through a vfs.FS and fsynced
// before every write returns, with the live entries kept in memory (the
// metadata log is short: raft compacts it behind every snapshot). When the
// dead records outnumber the live ones the file is rewritten in place
// (temporary file, fsync, rename, directory fsync).
//
// The first failed write or fsync is sticky: every later write returns it,
// and Failed is closed so that the node stops, as Kafka's controller does on
// a metadata log write failure. After a failed fsync nothing written since
// the last good one can be trusted, so the store does not try again; a
// restart reads back what reached the disk.
type raftStore struct {
	fs   vfs.FS
	path string

	// mu guards every field below.
	mu      sync.Mutex
	f       vfs.File // open for appending
	logs    map[uint64]*raft.Log
	first   uint64
	last    uint64
	stable  map[string][]byte
	records int // records in the file, live or dead
	failed  error

	failedCh chan struct{} // closed by the first failure
}

var (
	_ raft.LogStore    = (*raftStore)(nil)
	_ raft.StableStore = (*raftStore)(nil)
)

const (
	recLog    = 1
	recSet    = 2
	recDelete = 3

	recHeader = 8 // body length, CRC-32C of the body
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// openRaftStore opens (or creates) dir's raft store, keeping the records up
// to the first torn or corrupt one and truncating the file there.
func openRaftStore(fsys vfs.FS, dir string) (*raftStore, error) {
	s := &raftStore{
		fs: fsys, path: filepath.Join(dir, raftStoreName),
		logs: map[uint64]*raft.Log{}, stable: map[string][]byte{}, failedCh: make(chan struct{}),
	}
	data, err := vfs.ReadFile(fsys, s.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("controller: raft store: %w", err)
	}
	created := err != nil
	valid, err := s.replay(data)
	if err != nil {
		return nil, err
	}
	s.f, err = fsys.OpenFile(s.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("controller: raft store: %w", err)
	}
	if valid < len(data) {
		if err := s.f.Truncate(int64(valid)); err != nil {
			s.f.Close()
			return nil, fmt.Errorf("controller: raft store: truncate a torn tail: %w", err)
		}
	}
	if created || valid < len(data) {
		if err := s.f.Sync(); err != nil {
			s.f.Close()
			return nil, fmt.Errorf("controller: raft store: %w", err)
		}
		if err := vfs.SyncDir(fsys, dir); err != nil {
			s.f.Close()
			return nil, fmt.Errorf("controller: raft store: %w", err)
		}
	}
	return s, nil
}

// replay applies data's records and returns the length of its valid prefix.
//
// Only a torn last record is cut off: a record every write after it was
// appended to is a record the store acknowledged (a term, a vote, a log
// entry), so a bad record with more records behind it is corruption, and
// the store refuses to open rather than forget what it promised raft.
func (s *raftStore) replay(data []byte) (int, error) {
	pos := 0
	for len(data)-pos >= recHeader {
		n := int(binary.BigEndian.Uint32(data[pos:]))
		if n == 0 || n > len(data)-pos-recHeader {
			// A length running past the end is a torn append; zeros to
			// the end are an extent the crash left unwritten.
			if n != 0 || allZero(data[pos:]) || n > len(data)-pos-recHeader {
				break
			}
			return pos, fmt.Errorf("%w: raft store: zero-length record at position %d with %d bytes after it", ErrCorruptMetadataLog, pos, len(data)-pos)
		}
		end := pos + recHeader + n
		body := data[pos+recHeader : end]
		if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(data[pos+4:]) || !s.apply(body) {
			if end == len(data) {
				break // the last record, torn
			}
			return pos, fmt.Errorf("%w: raft store: bad record at position %d with %d bytes after it", ErrCorruptMetadataLog, pos, len(data)-end)
		}
		pos = end
		s.records++
	}
	return pos, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// apply applies one record's body to the in-memory state; false if it is
// malformed.
func (s *raftStore) apply(b []byte) bool {
	switch b[0] {
	case recLog:
		l, ok := decodeRaftLog(b[1:])
		if !ok {
			return false
		}
		s.putLog(l)
	case recSet:
		if len(b) < 3 {
			return false
		}
		kn := int(binary.BigEndian.Uint16(b[1:]))
		if len(b) < 3+kn+4 {
			return false
		}
		key := string(b[3 : 3+kn])
		vn := int(binary.BigEndian.Uint32(b[3+kn:]))
		if len(b) != 3+kn+4+vn {
			return false
		}
		s.stable[key] = append([]byte(nil), b[3+kn+4:]...)
	case recDelete:
		if len(b) != 17 {
			return false
		}
		s.deleteLogs(binary.BigEndian.Uint64(b[1:]), binary.BigEndian.Uint64(b[9:]))
	default:
		return false
	}
	return true
}

func appendRecord(dst []byte, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)))
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(body, castagnoli))
	return append(dst, body...)
}

func encodeRaftLog(l *raft.Log) []byte {
	b := make([]byte, 0, 1+8+8+1+8+4+len(l.Data)+4+len(l.Extensions))
	b = append(b, recLog)
	b = binary.BigEndian.AppendUint64(b, l.Index)
	b = binary.BigEndian.AppendUint64(b, l.Term)
	b = append(b, byte(l.Type))
	var at int64
	if !l.AppendedAt.IsZero() {
		at = l.AppendedAt.UnixNano()
	}
	b = binary.BigEndian.AppendUint64(b, uint64(at))
	b = binary.BigEndian.AppendUint32(b, uint32(len(l.Data)))
	b = append(b, l.Data...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(l.Extensions)))
	return append(b, l.Extensions...)
}

func decodeRaftLog(b []byte) (*raft.Log, bool) {
	if len(b) < 8+8+1+8+4 {
		return nil, false
	}
	l := &raft.Log{Index: binary.BigEndian.Uint64(b), Term: binary.BigEndian.Uint64(b[8:]), Type: raft.LogType(b[16])}
	if at := int64(binary.BigEndian.Uint64(b[17:])); at != 0 {
		l.AppendedAt = time.Unix(0, at)
	}
	b = b[25:]
	n := int(binary.BigEndian.Uint32(b))
	if len(b) < 4+n+4 {
		return nil, false
	}
	if n > 0 {
		l.Data = append([]byte(nil), b[4:4+n]...)
	}
	b = b[4+n:]
	m := int(binary.BigEndian.Uint32(b))
	if len(b) != 4+m {
		return nil, false
	}
	if m > 0 {
		l.Extensions = append([]byte(nil), b[4:]...)
	}
	return l, true
}

func (s *raftStore) putLog(l *raft.Log) {
	s.logs[l.Index] = l
	if s.first == 0 || l.Index < s.first {
		s.first = l.Index
	}
	if l.Index > s.last {
		s.last = l.Index
	}
}

func (s *raftStore) deleteLogs(lo, hi uint64) {
	if len(s.logs) == 0 || hi < s.first || lo > s.last {
		return
	}
	lo, hi = max(lo, s.first), min(hi, s.last)
	for i := lo; i <= hi; i++ {
		delete(s.logs, i)
	}
	if len(s.logs) == 0 {
		s.first, s.last = 0, 0
		return
	}
	for s.logs[s.first] == nil {
		s.first++
	}
	for s.logs[s.last] == nil {
		s.last--
	}
}

// Failed is closed when a write or fsync of the store failed.
func (s *raftStore) Failed() <-chan struct{} { return s.failedCh }

// Err is the failure that closed Failed, or nil.
func (s *raftStore) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// writeLocked appends records and fsyncs them; the first failure is sticky.
func (s *raftStore) writeLocked(buf []byte, records int) error {
	if s.failed != nil {
		return s.failed
	}
	if s.f == nil {
		return errors.New("controller: raft store is closed")
	}
	if _, err := s.f.Write(buf); err != nil {
		return s.failLocked(err)
	}
	if err := s.f.Sync(); err != nil {
		return s.failLocked(err)
	}
	s.records += records
	return nil
}

// fail fails the store for a write of the metadata dir made outside it (a
// snapshot); it returns the sticky error.
func (s *raftStore) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failLocked(err)
}

func (s *raftStore) failLocked(err error) error {
	if s.failed != nil {
		return s.failed
	}
	s.failed = fmt.Errorf("controller: raft store %s failed: %w", s.path, err)
	close(s.failedCh)
	return s.failed
}

func (s *raftStore) FirstIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first, nil
}

func (s *raftStore) LastIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, nil
}

func (s *raftStore) GetLog(index uint64, log *raft.Log) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.logs[index]
	if l == nil {
		return raft.ErrLogNotFound
	}
	*log = *l
	return nil
}

func (s *raftStore) StoreLog(log *raft.Log) error { return s.StoreLogs([]*raft.Log{log}) }

func (s *raftStore) StoreLogs(logs []*raft.Log) error {
	var buf []byte
	for _, l := range logs {
		buf = appendRecord(buf, encodeRaftLog(l))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writeLocked(buf, len(logs)); err != nil {
		return err
	}
	for _, l := range logs {
		c := *l
		s.putLog(&c)
	}
	return nil
}

func (s *raftStore) DeleteRange(lo, hi uint64) error {
	b := make([]byte, 0, 17)
	b = append(b, recDelete)
	b = binary.BigEndian.AppendUint64(b, lo)
	b = binary.BigEndian.AppendUint64(b, hi)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writeLocked(appendRecord(nil, b), 1); err != nil {
		return err
	}
	s.deleteLogs(lo, hi)
	if live := len(s.logs) + len(s.stable); s.records > 2*live+1024 {
		return s.rewriteLocked()
	}
	return nil
}

// rewriteLocked replaces the file with the live records alone.
func (s *raftStore) rewriteLocked() error {
	var buf []byte
	n := 0
	for k, v := range s.stable {
		buf = appendRecord(buf, encodeSet(k, v))
		n++
	}
	for i := s.first; s.last != 0 && i <= s.last; i++ {
		if l := s.logs[i]; l != nil {
			buf = appendRecord(buf, encodeRaftLog(l))
			n++
		}
	}
	tmp := s.path + ".tmp"
	if err := vfs.WriteFileSync(s.fs, tmp, buf); err != nil {
		return s.failLocked(err)
	}
	if err := s.fs.Rename(tmp, s.path); err != nil {
		return s.failLocked(err)
	}
	if err := vfs.SyncDir(s.fs, filepath.Dir(s.path)); err != nil {
		return s.failLocked(err)
	}
	s.f.Close()
	f, err := s.fs.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.f = nil
		return s.failLocked(err)
	}
	s.f, s.records = f, n
	return nil
}

func encodeSet(key string, val []byte) []byte {
	b := make([]byte, 0, 1+2+len(key)+4+len(val))
	b = append(b, recSet)
	b = binary.BigEndian.AppendUint16(b, uint16(len(key)))
	b = append(b, key...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(val)))
	return append(b, val...)
}

func (s *raftStore) Set(key []byte, val []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writeLocked(appendRecord(nil, encodeSet(string(key), val)), 1); err != nil {
		return err
	}
	s.stable[string(key)] = append([]byte(nil), val...)
	return nil
}

func (s *raftStore) Get(key []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.stable[string(key)]
	if !ok {
		return nil, errKeyNotFound
	}
	return append([]byte(nil), v...), nil
}

func (s *raftStore) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

func (s *raftStore) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("controller: raft store: key %q holds %d bytes, not a uint64", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Close closes the file; the store must not be used afterwards.
func (s *raftStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// MetadataLogFailed is closed when a write or fsync of this node's raft log
// or stable store failed. The failure is sticky: the node can neither vote
// nor append any more, and must stop, as Kafka's controller does on a
// metadata log write failure; MetadataLogErr says why.
func (c *Controller) MetadataLogFailed() <-chan struct{} { return c.store.Failed() }

// MetadataLogErr is the failure that closed MetadataLogFailed, or nil.
func (c *Controller) MetadataLogErr() error { return c.store.Err() }

// stopOnMetadataLogFailure shuts raft down as soon as the store failed:
// raft would otherwise go on as a follower and, at its next election,
// panic on the stable store's sticky error.
func (c *Controller) stopOnMetadataLogFailure() {
	defer c.wg.Done()
	select {
	case <-c.store.Failed():
		c.log.Error("metadata log write failed; raft stops", "err", c.store.Err())
		c.raft.Shutdown()
	case <-c.done:
	}
}
