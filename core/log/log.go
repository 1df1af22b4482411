package log

import (
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gregorbroker/gregor/core/record"
)

// Log is one partition's log: a directory of segments. It is safe for
// concurrent use: appends and structural changes are serialised, reads run
// concurrently with each other.
type Log struct {
	topic     string
	partition int32
	dir       string
	opts      Options
	logger    *slog.Logger

	// cleanMu serialises compactions of this log. Taken before flushMu.
	cleanMu sync.Mutex

	// hw is the high watermark the partition last recorded, kept for the
	// data dir's replication-offset-checkpoint; -1 when none is known.
	// Atomic, so that recording it costs an append nothing.
	hw atomic.Int64
	// dirtySince is the clock reading (Unix nanoseconds) no later than the
	// oldest append not yet covered by an fsync, kept only while FlushMs is
	// set; 0 when nothing is owed. Atomic, so the flush scheduler reads it
	// without mu.
	dirtySince atomic.Int64

	// flushMu serialises fsyncs with each other and with changes that close
	// segment files (retention, truncation, compaction swaps, close). Taken
	// before mu.
	flushMu sync.Mutex

	// mu guards every field below and the fields of each segment.
	mu            sync.RWMutex
	cfg           Config
	segs          []*segment // ascending base offsets; the last is active
	logStart      int64
	recoveryPoint int64
	unflushed     []*segment // rolled segments whose files still need an fsync
	dirDirty      bool       // a segment file was created since the last fsync of dir
	rolls         uint64     // count of rolls, to tell whether dirDirty is still owed
	epochs        *epochCache
	failed        error // set by a failed write or fsync; later writes return it
	// health is shared with the other logs of the data dir: a failure of
	// any of them takes all of them offline.
	health *dirHealth
	closed bool
	// cleanedTo is the cleaner checkpoint: offsets below it have been
	// compacted. Kept in the data dir's cleaner-offset-checkpoint.
	cleanedTo int64
	// deleteHorizon is the earliest delete horizon of a compacted batch that
	// still holds tombstones; 0 when not yet known, -1 when there is none.
	deleteHorizon int64
}

// Topic returns the log's topic.
func (l *Log) Topic() string { return l.topic }

// Partition returns the log's partition.
func (l *Log) Partition() int32 { return l.partition }

// Path returns the log's directory.
func (l *Log) Path() string { return l.dir }

// Config returns the log's configuration.
func (l *Log) Config() Config {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg
}

// SetConfig replaces the log's configuration; it applies to later appends and
// retention runs. cfg must pass Validate.
func (l *Log) SetConfig(cfg Config) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg = cfg
	l.resetDirtyLocked()
}

func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

func (l *Log) String() string { return fmt.Sprintf("%s-%d", l.topic, l.partition) }

// LogEndOffset returns the offset the next appended record will get.
func (l *Log) LogEndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.active().next
}

// LogStartOffset returns the first offset a read may ask for.
func (l *Log) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.logStart
}

// RecoveryPoint returns the offset below which all data is known to be on
// disk.
func (l *Log) RecoveryPoint() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.recoveryPoint
}

// Size returns the total bytes of the log's segments.
func (l *Log) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	for _, s := range l.segs {
		n += s.size
	}
	return n
}

// SegmentInfo describes one segment for retention decisions and
// DescribeLogDirs.
type SegmentInfo struct {
	BaseOffset int64
	Size       int64
	// LargestTimestamp is the newest batch timestamp, or the file's
	// modification time in milliseconds when no batch has one.
	LargestTimestamp int64
	// NextOffset is the offset after the segment's last batch.
	NextOffset int64
}

// Segments describes the log's segments, oldest first; the last is active.
func (l *Log) Segments() []SegmentInfo {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]SegmentInfo, len(l.segs))
	for i, s := range l.segs {
		out[i] = SegmentInfo{BaseOffset: s.base, Size: s.size, LargestTimestamp: s.largestTimestamp(), NextOffset: s.next}
	}
	return out
}

// LatestEpoch returns the newest leader epoch recorded in the log.
func (l *Log) LatestEpoch() (epoch int32, ok bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	e, ok := l.epochs.latest()
	return e.epoch, ok
}

// AssignEpochStart records that a new leader epoch starts at the log end
// offset, as a replica does when it becomes leader, so that offset lookups
// know the epoch before its first batch is written. An epoch at or below
// the latest known one changes nothing.
func (l *Log) AssignEpochStart(epoch int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	if last, ok := l.epochs.latest(); ok && last.epoch >= epoch {
		return nil
	}
	if l.epochs.assign(epoch, l.active().next) {
		if err := l.epochs.write(); err != nil {
			return l.fail(fmt.Errorf("leader-epoch-checkpoint: %w", err))
		}
	}
	return nil
}

// EndOffsetForEpoch answers OffsetsForLeaderEpoch with Kafka's semantics: the
// largest known epoch <= epoch and the start offset of the epoch after it (the
// log end offset when epoch is the latest); (-1, -1) when unknown.
func (l *Log) EndOffsetForEpoch(epoch int32) (foundEpoch int32, endOffset int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.epochs.endOffsetFor(epoch, l.active().next)
}

// Append writes one validated v2 batch at the log end offset, which it writes
// into the batch's BaseOffset field in place, and returns that offset. It rolls
// a new segment first when the batch would overflow the active one, the active
// segment is older than SegmentMs, its index is full, or the batch's offsets
// do not fit its relative offsets. It fsyncs (Sync) only when the topic's
// flush.messages is reached.
func (l *Log) Append(batch []byte) (baseOffset int64, err error) {
	h, err := record.ParseHeader(batch)
	if err != nil {
		return 0, fmt.Errorf("log: %s: append: %w", l, err)
	}
	switch {
	case h.Size() != len(batch) || h.Length < record.MinLength:
		return 0, fmt.Errorf("%w: log %s: append: batch length field %d does not match %d bytes", ErrCorrupt, l, h.Length, len(batch))
	case h.LastOffsetDelta < 0:
		return 0, fmt.Errorf("%w: log %s: append: negative last offset delta %d", ErrCorrupt, l, h.LastOffsetDelta)
	}
	return l.append(batch, h)
}

// AppendChecked is Append for a batch record.Inspect checked, with the
// facts it returned (stamped through their methods since): the header is
// not parsed again. A length that disagrees with the facts is ErrCorrupt.
func (l *Log) AppendChecked(batch []byte, f record.Facts) (baseOffset int64, err error) {
	if f.Size() != len(batch) {
		return 0, fmt.Errorf("%w: log %s: append: facts of a %d-byte batch for %d bytes", ErrCorrupt, l, f.Size(), len(batch))
	}
	return l.append(batch, f.Header)
}

// append is Append once the header h of batch was checked. When flush.messages
// is reached it fsyncs before returning.
func (l *Log) append(batch []byte, h record.Header) (baseOffset int64, err error) {
	leo, flush, err := l.appendLocked(batch, h)
	if err != nil || !flush {
		return leo, err
	}
	return leo, l.Sync()
}

// appendLocked writes batch under mu and reports whether flush.messages asks
// for an fsync.
func (l *Log) appendLocked(batch []byte, h record.Header) (baseOffset int64, flush bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return 0, false, err
	}
	if int64(len(batch)) > l.cfg.SegmentBytes {
		return 0, false, fmt.Errorf("%w: log %s: batch of %d bytes, segments hold %d", ErrBatchTooLarge, l, len(batch), l.cfg.SegmentBytes)
	}
	s := l.active()
	leo := s.next
	if leo > math.MaxInt64-int64(h.LastOffsetDelta)-1 {
		return 0, false, fmt.Errorf("log: %s: append: offsets past %d overflow", l, leo)
	}
	h.BaseOffset = leo
	if l.shouldRoll(s, h) {
		if err := l.roll(); err != nil {
			return 0, false, l.fail(err)
		}
		s = l.active()
	}
	if h.PartitionLeaderEpoch >= 0 && l.epochs.assign(h.PartitionLeaderEpoch, leo) {
		if err := l.epochs.write(); err != nil {
			return 0, false, l.fail(err)
		}
	}
	record.SetBaseOffset(batch, leo)
	if err := s.append(batch, h, l.cfg.IndexIntervalBytes); err != nil {
		return 0, false, l.fail(err)
	}
	return leo, l.noteAppendLocked(s.next), nil
}

// shouldRoll applies Kafka's LogSegment.shouldRoll without jitter.
func (l *Log) shouldRoll(s *segment, h record.Header) bool {
	if s.size == 0 {
		return false
	}
	var waited int64
	if s.firstTS >= 0 {
		waited = h.MaxTimestamp - s.firstTS
	} else {
		waited = l.opts.Now().Sub(s.created).Milliseconds()
	}
	return s.size+int64(h.Size()) > l.cfg.SegmentBytes ||
		waited > l.cfg.SegmentMs ||
		s.indexFull(l.cfg.MaxIndexBytes) ||
		h.LastOffset()-s.base > math.MaxInt32
}

// roll starts a new active segment at the log end offset.
func (l *Log) roll() error {
	old := l.active()
	if err := old.becomeInactive(); err != nil {
		return err
	}
	s, err := createSegment(l.opts.FS, l.dir, old.next, l.opts.Now(), l.logger)
	if err != nil {
		return err
	}
	l.segs = append(l.segs, s)
	l.unflushed = append(l.unflushed, old)
	l.dirDirty = true
	l.rolls++
	return nil
}

// writable reports why the log refuses writes, if it does.
func (l *Log) writable() error {
	if l.closed {
		return ErrClosed
	}
	if l.failed != nil {
		return l.failed
	}
	return l.health.offline()
}

// fail records a write or fsync error so later writes fail fast instead of
// writing past a hole, and takes the log's data dir offline. The caller holds
// mu for writing.
func (l *Log) fail(err error) error {
	if l.failed == nil {
		l.failed = l.health.fail(fmt.Errorf("log %s: %w", l, err))
	}
	return l.failed
}

// Sync makes everything appended before the call durable, then advances the
// recovery point. Concurrent callers share fsyncs: a caller whose appends were
// covered by another caller's fsync returns without its own.
func (l *Log) Sync() error { return l.flush(true) }

// flush fsyncs the rolled segments not yet fsynced and, when withActive is
// set, the active segment, then advances the recovery point over what the
// fsyncs covered: the log end offset, or the active segment's base offset.
func (l *Log) flush(withActive bool) error {
	l.mu.RLock()
	if err := l.writable(); err != nil {
		l.mu.RUnlock()
		return err
	}
	target := l.active().next
	l.mu.RUnlock()

	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.RLock()
	if err := l.writable(); err != nil {
		l.mu.RUnlock()
		return err
	}
	if (!withActive || l.recoveryPoint >= target) && len(l.unflushed) == 0 && !l.dirDirty {
		if withActive && l.active().next <= l.recoveryPoint {
			l.dirtySince.Store(0) // appends need mu for writing: none is in flight
		}
		l.mu.RUnlock()
		return nil
	}
	var started int64 // when FlushMs is tracked: no later than any append after target
	if withActive && l.dirtySince.Load() != 0 {
		started = l.opts.Now().UnixNano()
	}
	pending := len(l.unflushed)
	active, dirDirty, rolls := l.active(), l.dirDirty, l.rolls
	files := make([]segFlush, 0, pending+1)
	for _, s := range l.unflushed {
		files = append(files, s.toFlush())
	}
	if target = active.base; withActive {
		target, files = active.next, append(files, active.toFlush())
	}
	l.mu.RUnlock()

	// Segment files cannot be closed meanwhile: that needs flushMu.
	var err error
	for _, f := range files {
		if err = f.flush(); err != nil {
			break
		}
	}
	if err == nil && dirDirty {
		err = syncDir(l.opts.FS, l.dir)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// Sticky: the pages the failed fsync covered may be gone while a
		// later fsync reports success.
		return l.fail(err)
	}
	for _, f := range files {
		f.s.flushed(f)
	}
	l.unflushed = l.unflushed[pending:]
	if dirDirty && l.rolls == rolls {
		l.dirDirty = false
	}
	l.recoveryPoint = max(l.recoveryPoint, target)
	l.flushedLocked(started)
	return nil
}

// segmentFor returns the index of the segment that would hold offset: the last
// one whose base offset is <= offset, or 0.
func (l *Log) segmentFor(offset int64) int {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset })
	return max(i-1, 0)
}

// Close flushes the log, writes the active segment's final time index entry
// and releases every file. Later calls on the log return ErrClosed.
func (l *Log) Close() error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	err := l.writable()
	if err == nil {
		s := l.active()
		s.addTimeEntry(s.maxTS, s.maxTSOffset)
		for _, s := range append(l.unflushed, l.active()) {
			if ferr := s.toFlush().flush(); err == nil {
				err = ferr
			}
		}
		if err == nil && l.dirDirty {
			err = syncDir(l.opts.FS, l.dir)
		}
		if err == nil {
			l.recoveryPoint = l.active().next
			l.unflushed, l.dirDirty = nil, false
			l.dirtySince.Store(0)
		} else {
			err = l.fail(err)
		}
	}
	l.closeFiles()
	return err
}

// closeFiles releases every segment's files; the caller holds mu.
func (l *Log) closeFiles() {
	for _, s := range l.segs {
		_ = s.close()
	}
	l.closed = true
}
