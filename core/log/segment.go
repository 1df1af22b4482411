package log

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/record"
)

// File name suffixes of a segment, as Kafka names them.
const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
	txnIndexSuffix  = ".txnindex"
)

// segmentName is a segment file name: the base offset in 20 digits.
func segmentName(base int64, suffix string) string { return fmt.Sprintf("%020d%s", base, suffix) }

// segment is one .log file with its two index files. Its fields are guarded by
// the owning Log's mu: written under the write lock, read under either.
type segment struct {
	base int64
	dir  string
	fs   vfs.FS
	// logf is the open .log file, nil while closed: a segment loaded at
	// start-up other than the active one opens it on first use (file), so
	// that a restart holds one descriptor per partition however many
	// segments it has. Opened under openMu by callers holding mu either
	// way, closed only under mu for writing.
	logf   atomic.Pointer[segFile]
	openMu sync.Mutex

	size            int64 // bytes in the .log file
	next            int64 // offset after the last batch; base when empty
	maxTS           int64 // largest batch MaxTimestamp; -1 when none
	maxTSOffset     int64 // last offset of the batch that carried maxTS
	firstTS         int64 // MaxTimestamp of the first batch, the roll clock; -1 when unknown
	created         time.Time
	bytesSinceIndex int64

	// The active segment's index entries are appended to idx's heap copy
	// alone; its files get them at a flush, a roll or a close, each time
	// through a descriptor opened for the purpose (index_write.go), so that
	// a segment holds no index file open and an append makes no index
	// syscall. offWritten and timWritten are the bytes of the heap indexes
	// already in the files; idxWrites counts writes to the files and
	// idxSynced is its value before their last fsync. Guarded by mu;
	// lowered (truncation) only under flushMu too.
	appendable             bool // the segment is active: idx is its heap copy
	offWritten, timWritten int
	idxWrites, idxSynced   uint64

	// idx is the in-memory view of both indexes: a heap copy while the
	// segment is active, a read-only mapping loaded on first use after that.
	// It is loaded under loadMu by readers holding Log.mu for reading, and
	// replaced or released only under Log.mu for writing.
	idx    atomic.Pointer[segIndex]
	loadMu sync.Mutex

	// aborted holds the entries of the .txnindex, oldest marker first;
	// txnDirty says entries were appended since the last fsync.
	aborted  []AbortedTxn
	txnDirty atomic.Bool
}

// segIndex holds a segment's offset index and time index entries.
type segIndex struct {
	off, tim             []byte
	offMapped, timMapped bool // the slice is an mmap to release
}

func (si *segIndex) release() {
	if si.offMapped {
		_ = unmapFile(si.off)
	}
	if si.timMapped {
		_ = unmapFile(si.tim)
	}
	si.off, si.tim, si.offMapped, si.timMapped = nil, nil, false, false
}

func (s *segment) path(suffix string) string {
	return filepath.Join(s.dir, segmentName(s.base, suffix))
}

func (s *segment) String() string { return s.path(logSuffix) }

// createSegment makes an empty segment, replacing stale files of that name.
func createSegment(fsys vfs.FS, dir string, base int64, now time.Time, logger *slog.Logger) (*segment, error) {
	s := &segment{fs: fsys, base: base, dir: dir, next: base, maxTS: -1, maxTSOffset: base, firstTS: -1, created: now, appendable: true}
	// The index files are created empty, so that a load finds them, and
	// closed again.
	for _, suffix := range []string{indexSuffix, timeIndexSuffix, logSuffix} {
		p := s.path(suffix)
		if _, err := fsys.Lstat(p); err == nil {
			logger.Warn("log: newly rolled segment file already exists; replacing it", "file", p)
			s.idxWrites = 1 // the truncation is owed an fsync
		}
		f, err := fsys.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, fmt.Errorf("log: create segment: %w", err)
		}
		if suffix == logSuffix {
			s.logf.Store(&segFile{f})
		} else if err := f.Close(); err != nil {
			return nil, fmt.Errorf("log: create segment: %w", err)
		}
	}
	_ = fsys.Remove(s.path(txnIndexSuffix))
	s.idx.Store(&segIndex{})
	return s, nil
}

// openSegment opens an existing .log file; indexes are loaded separately.
func openSegment(fsys vfs.FS, dir string, base int64, now time.Time) (*segment, error) {
	s := &segment{fs: fsys, base: base, dir: dir, next: base, maxTS: -1, maxTSOffset: base, firstTS: -1, created: now}
	f, err := fsys.OpenFile(s.path(logSuffix), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("log: open segment: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("log: stat segment: %w", err)
	}
	s.logf.Store(&segFile{f})
	s.size = st.Size()
	return s, nil
}

// segFile holds a segment's open .log file.
type segFile struct{ vfs.File }

// file returns the open .log file, opening it first if it is closed. The
// caller holds the Log's mu.
func (s *segment) file() (vfs.File, error) {
	if f := s.logf.Load(); f != nil {
		return f.File, nil
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	if f := s.logf.Load(); f != nil {
		return f.File, nil
	}
	f, err := s.fs.OpenFile(s.path(logSuffix), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: open segment %s: %w", ErrStorage, s, err)
	}
	s.logf.Store(&segFile{f})
	return f, nil
}

// ReadAt reads the .log file, opening it on first use.
func (s *segment) ReadAt(p []byte, off int64) (int, error) {
	f, err := s.file()
	if err != nil {
		return 0, err
	}
	return f.ReadAt(p, off)
}

// closeLog closes the .log file until its next use; the caller holds the
// Log's mu for writing, or owns the segment alone.
func (s *segment) closeLog() error {
	if f := s.logf.Swap(nil); f != nil {
		return f.Close()
	}
	return nil
}

// largestTimestamp is the newest timestamp in the segment, or the file's
// modification time when no batch carries one (Kafka's rule for retention).
func (s *segment) largestTimestamp() int64 {
	if s.maxTS >= 0 {
		return s.maxTS
	}
	if st, err := s.fs.Lstat(s.path(logSuffix)); err == nil {
		return st.ModTime().UnixMilli()
	}
	return 0
}

// indexes returns the segment's index view, loading (and if needed repairing)
// it on first use. The caller holds the Log's mu.
func (s *segment) indexes(interval int32, logger *slog.Logger) (*segIndex, error) {
	if si := s.idx.Load(); si != nil {
		return si, nil
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if si := s.idx.Load(); si != nil {
		return si, nil
	}
	si, err := s.mapIndexes()
	if err == nil {
		err = s.checkIndexes(si)
	}
	if err != nil {
		if si != nil {
			si.release()
		}
		if !isDataError(err) && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		logger.Warn("log: rebuilding index", "segment", s.String(), "reason", err.Error())
		r, err := s.scanAndIndex(interval, false, nil)
		if err != nil {
			return nil, err
		}
		if err := s.writeIndexes(r.si); err != nil {
			return nil, err
		}
		si = r.si
	}
	s.idx.Store(si)
	return si, nil
}

// mapIndexes maps both index files read-only.
func (s *segment) mapIndexes() (*segIndex, error) {
	si := &segIndex{}
	for _, x := range []struct {
		suffix string
		dst    *[]byte
		mapped *bool
	}{{indexSuffix, &si.off, &si.offMapped}, {timeIndexSuffix, &si.tim, &si.timMapped}} {
		f, err := vfs.Open(s.fs, s.path(x.suffix))
		if err != nil {
			si.release()
			return nil, err
		}
		st, err := f.Stat()
		if err == nil {
			*x.dst, *x.mapped, err = mapFile(f, st.Size())
		}
		_ = f.Close()
		if err != nil {
			si.release()
			return nil, err
		}
	}
	return si, nil
}

// readIndexes reads both index files into the heap.
func (s *segment) readIndexes() (*segIndex, error) {
	off, err := vfs.ReadFile(s.fs, s.path(indexSuffix))
	if err != nil {
		return nil, err
	}
	tim, err := vfs.ReadFile(s.fs, s.path(timeIndexSuffix))
	if err != nil {
		return nil, err
	}
	return &segIndex{off: off, tim: tim}, nil
}

func (s *segment) checkIndexes(si *segIndex) error {
	if err := checkOffsetIndex(si.off, s.base, s.next, s.size); err != nil {
		return err
	}
	return checkTimeIndex(si.tim, s.base, s.next)
}

// segScan is what a full walk of a segment file learned.
type segScan struct {
	si          *segIndex // indexes of the valid batches
	validEnd    int64     // where valid batches end
	dataErr     error     // why the walk stopped before the end of the file
	next        int64
	maxTS       int64
	maxTSOffset int64
	firstTS     int64
}

// scanAndIndex walks the whole .log file, optionally verifying CRCs, and
// builds its indexes by Kafka's rule: an entry for a batch when more than
// interval bytes precede it since the previous entry, and a final time entry
// for the largest timestamp. It changes neither the segment nor its files.
func (s *segment) scanAndIndex(interval int32, crc bool, onBatch func(record.Header)) (segScan, error) {
	r := segScan{si: &segIndex{}, next: s.base, maxTS: -1, maxTSOffset: s.base, firstTS: -1}
	var sinceLast int64
	end, err := walkBatches(s, 0, s.size, walkOptions{base: s.base, minNext: s.base, crc: crc}, func(pos int64, h record.Header) error {
		if pos == 0 {
			r.firstTS = h.MaxTimestamp
		}
		if h.MaxTimestamp > r.maxTS {
			r.maxTS, r.maxTSOffset = h.MaxTimestamp, h.LastOffset()
		}
		if sinceLast > int64(interval) {
			r.si.off = appendOffsetEntry(r.si.off, s.base, h.LastOffset(), pos)
			r.si.tim = maybeAppendTime(r.si.tim, s.base, r.maxTS, r.maxTSOffset)
			sinceLast = 0
		}
		sinceLast += int64(h.Size())
		r.next = h.NextOffset()
		if onBatch != nil {
			onBatch(h)
		}
		return nil
	})
	if err != nil && !isDataError(err) {
		return r, fmt.Errorf("log: scan %s: %w", s, err)
	}
	r.validEnd, r.dataErr = end, err
	r.si.tim = maybeAppendTime(r.si.tim, s.base, r.maxTS, r.maxTSOffset)
	return r, nil
}

// writeIndexes replaces both index files with si's entries.
func (s *segment) writeIndexes(si *segIndex) error {
	if err := writeFileSync(s.fs, s.path(indexSuffix), si.off); err != nil {
		return err
	}
	return writeFileSync(s.fs, s.path(timeIndexSuffix), si.tim)
}

// maybeAppendTime appends a time index entry when ts is newer than the last
// entry (Kafka's TimeIndex.maybeAppend).
func maybeAppendTime(idx []byte, base, ts, offset int64) []byte {
	if last, _ := lastTime(idx, base); ts > last {
		return appendTimeEntry(idx, base, ts, offset)
	}
	return idx
}

// writeFileSync replaces a file's contents and fsyncs it.
func writeFileSync(fsys vfs.FS, path string, data []byte) error {
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("log: write %s: %w", path, err)
	}
	return nil
}

// activate prepares the segment for appends: a heap copy of its indexes,
// which its files hold whole.
func (s *segment) activate(interval int32, logger *slog.Logger) error {
	if s.appendable {
		return nil
	}
	si, err := s.indexes(interval, logger)
	if err != nil {
		return err
	}
	if si.offMapped || si.timMapped {
		heap := &segIndex{off: append([]byte(nil), si.off...), tim: append([]byte(nil), si.tim...)}
		si.release()
		si = heap
		s.idx.Store(si)
	}
	s.appendable, s.offWritten, s.timWritten = true, len(si.off), len(si.tim)
	return nil
}

// indexFull reports whether either index holds maxBytes worth of entries.
func (s *segment) indexFull(maxBytes int32) bool {
	si := s.idx.Load()
	return offsetEntries(si.off) >= int(maxBytes)/offsetEntrySize || timeEntries(si.tim) >= int(maxBytes)/timeEntrySize
}

// append writes one batch, whose header h already carries its final offsets,
// at the end of the active segment and indexes it.
func (s *segment) append(batch []byte, h record.Header, interval int32) error {
	pos := s.size
	f, err := s.file()
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(batch, pos); err != nil {
		_ = f.Truncate(pos)
		return fmt.Errorf("%w: append to %s: %w", ErrStorage, s, err)
	}
	if pos == 0 {
		s.firstTS = h.MaxTimestamp
	}
	s.size += int64(len(batch))
	s.next = h.NextOffset()
	if h.MaxTimestamp > s.maxTS {
		s.maxTS, s.maxTSOffset = h.MaxTimestamp, h.LastOffset()
	}
	if s.bytesSinceIndex > int64(interval) {
		s.addOffsetEntry(h.LastOffset(), pos)
		s.addTimeEntry(s.maxTS, s.maxTSOffset)
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += int64(len(batch))
	return nil
}

// addOffsetEntry appends an offset index entry to the heap index; the file
// gets it later (index_write.go).
func (s *segment) addOffsetEntry(offset, pos int64) {
	si := s.idx.Load()
	si.off = appendOffsetEntry(si.off, s.base, offset, pos)
}

// addTimeEntry appends a time index entry if ts is newer than the last one.
func (s *segment) addTimeEntry(ts, offset int64) {
	si := s.idx.Load()
	si.tim = maybeAppendTime(si.tim, s.base, ts, offset)
}

// becomeInactive finishes the segment when a newer one takes over: the time
// index gets the largest timestamp, as Kafka writes at a roll, the index
// files the entries they lack, and the heap index is dropped in favour of a
// mapping loaded on demand. The files' fsync is left to the next flush.
func (s *segment) becomeInactive() error {
	s.addTimeEntry(s.maxTS, s.maxTSOffset)
	t := s.indexTails()
	if err := s.writeTails(t, false); err != nil {
		return err
	}
	s.wroteTails(t)
	s.appendable = false
	s.idx.Store(nil)
	return nil
}

// syncPath fsyncs a file by name.
func syncPath(fsys vfs.FS, path string) error {
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// close releases every handle and mapping of the segment.
func (s *segment) close() error {
	if si := s.idx.Swap(nil); si != nil {
		si.release()
	}
	return s.closeLog()
}

// remove closes the segment and deletes its files.
func (s *segment) remove() error {
	_ = s.close()
	var errs []error
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix, txnIndexSuffix} {
		if err := s.fs.Remove(s.path(suffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("log: delete segment %s: %w", s, errors.Join(errs...))
	}
	return nil
}

// translate finds the first batch at or after startPos whose last offset is
// >= target, using the offset index to skip ahead. found is false when the
// segment holds no such batch.
func (s *segment) translate(si *segIndex, target, startPos int64) (pos int64, h record.Header, found bool, err error) {
	_, p := lookupOffset(si.off, s.base, target)
	p = max(p, startPos)
	_, err = walkBatches(s, p, s.size, walkOptions{base: s.base, minNext: s.base}, func(bp int64, bh record.Header) error {
		if bh.LastOffset() >= target {
			pos, h, found = bp, bh, true
			return errStop
		}
		return nil
	})
	if found {
		return pos, h, true, nil
	}
	if err != nil {
		return 0, record.Header{}, false, fmt.Errorf("log: segment %s: %w", s, err)
	}
	return 0, record.Header{}, false, nil
}

// errStop ends a batch walk early once the wanted batch is found.
var errStop = errors.New("log: stop walk")

// readAt reads n bytes at pos into a new or reused buffer.
func (s *segment) readAt(dst []byte, pos int64, n int) ([]byte, error) {
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	if _, err := s.ReadAt(dst, pos); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: segment %s: %d bytes at %d run past the end", ErrCorrupt, s, n, pos)
		}
		return nil, fmt.Errorf("log: read %s: %w", s, err)
	}
	return dst, nil
}
