package log

import (
	"fmt"
	"math"

	"github.com/gregorbroker/gregor/core/record"
)

// Truncate removes every batch holding an offset >= to, for a follower whose
// log diverged from its leader's. A batch that straddles to is removed whole,
// so the new log end offset is to or, in that case, the straddling batch's
// base offset. Truncating below the first segment empties the log and starts
// it at to. Nothing happens when to >= the log end offset.
func (l *Log) Truncate(to int64) error {
	if to < 0 {
		return fmt.Errorf("log: %s: truncate to negative offset %d", l, to)
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	if to >= l.active().next {
		return nil
	}
	if to < l.segs[0].base {
		return l.resetTo(to)
	}
	// Drop whole segments above to.
	for len(l.segs) > 1 && l.active().base > to {
		s := l.active()
		l.segs = l.segs[:len(l.segs)-1]
		l.forgetUnflushed(s)
		if err := s.remove(); err != nil {
			return l.fail(err)
		}
	}
	s := l.active()
	if err := s.activate(l.cfg.IndexIntervalBytes, l.logger); err != nil {
		return l.fail(err)
	}
	// Active again: Sync flushes it as the active segment from now on.
	l.forgetUnflushed(s)
	if err := l.truncateSegment(s, to); err != nil {
		return l.fail(err)
	}
	if err := s.truncateTxnIndex(s.next); err != nil {
		return l.fail(err)
	}
	l.recoveryPoint = min(l.recoveryPoint, s.next)
	l.logStart = min(l.logStart, s.next)
	l.cleanedTo = min(l.cleanedTo, s.next)
	if l.epochs.truncateFromEnd(s.next) {
		if err := l.epochs.write(); err != nil {
			return l.fail(err)
		}
	}
	return nil
}

// truncateSegment cuts segment s, now the active one, before the first batch
// whose last offset is >= to, and trims its indexes to match.
func (l *Log) truncateSegment(s *segment, to int64) error {
	si := s.idx.Load()
	pos, h, found, err := s.translate(si, to, 0)
	if err != nil {
		return err
	}
	if !found {
		// Every batch is below to; to falls in a gap after them.
		s.next = to
		return nil
	}
	f, err := s.file()
	if err == nil {
		err = f.Truncate(pos)
	}
	if err != nil {
		return fmt.Errorf("log: truncate %s: %w", s, err)
	}
	s.size = pos
	// A straddling batch goes whole, leaving its base as the end offset.
	s.next = min(to, h.BaseOffset)

	// Offset entries name batches by their last offset, so entries >= to
	// point at removed batches; time entries likewise by offset.
	n := offsetEntries(si.off)
	for n > 0 {
		if off, _ := offsetEntry(si.off, s.base, n-1); off < to {
			break
		}
		n--
	}
	si.off = si.off[:n*offsetEntrySize]
	m := timeEntries(si.tim)
	for m > 0 {
		if _, off := timeEntry(si.tim, s.base, m-1); off < to {
			break
		}
		m--
	}
	si.tim = si.tim[:m*timeEntrySize]
	if err := s.truncateIndexFiles(si); err != nil {
		return err
	}

	// Recompute what the segment knows of its remaining batches: the time
	// index covers up to its last entry, the batches after the last offset
	// entry are scanned.
	s.bytesSinceIndex = 0
	s.maxTS, s.maxTSOffset = lastTime(si.tim, s.base)
	s.firstTS = -1
	if s.size == 0 {
		s.created = l.opts.Now()
		return nil
	}
	var from int64
	if k := offsetEntries(si.off); k > 0 {
		_, from = offsetEntry(si.off, s.base, k-1)
	}
	_, err = walkBatches(s, from, s.size, walkOptions{base: s.base, minNext: s.base}, func(_ int64, bh record.Header) error {
		if bh.MaxTimestamp > s.maxTS {
			s.maxTS, s.maxTSOffset = bh.MaxTimestamp, bh.LastOffset()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("log: %s: %w", s, err)
	}
	return s.loadFirstTimestamp()
}

// loadFirstTimestamp reads the first batch's MaxTimestamp, the roll clock.
func (s *segment) loadFirstTimestamp() error {
	s.firstTS = -1
	if s.size == 0 {
		return nil
	}
	sc := newFileScanner(s, s.size)
	defer sc.release()
	h, err := sc.header(0)
	if err != nil {
		return fmt.Errorf("log: %s: %w", s, err)
	}
	s.firstTS = h.MaxTimestamp
	return nil
}

// resetTo deletes every segment and starts the log empty at offset.
func (l *Log) resetTo(offset int64) error {
	for _, s := range l.segs {
		if err := s.remove(); err != nil {
			return l.fail(err)
		}
	}
	l.segs, l.unflushed = nil, nil
	s, err := createSegment(l.opts.FS, l.dir, offset, l.opts.Now(), l.logger)
	if err != nil {
		return l.fail(err)
	}
	l.segs = []*segment{s}
	l.dirDirty = true
	l.rolls++
	l.logStart, l.recoveryPoint, l.cleanedTo = offset, offset, offset
	l.epochs.entries = nil
	if err := l.epochs.write(); err != nil {
		return l.fail(err)
	}
	return nil
}

// forgetUnflushed drops s from the segments awaiting an fsync.
func (l *Log) forgetUnflushed(s *segment) {
	for i, u := range l.unflushed {
		if u == s {
			l.unflushed = append(l.unflushed[:i], l.unflushed[i+1:]...)
			return
		}
	}
}

// DeleteRecordsBefore raises the log start offset to offset (Kafka's
// DeleteRecords) and deletes the segments wholly below it. offset may not pass
// the log end offset; a lower offset than the current start is a no-op.
func (l *Log) DeleteRecordsBefore(offset int64) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	if leo := l.active().next; offset > leo || offset < 0 {
		return fmt.Errorf("%w: log %s: delete records before %d outside [0, %d]", ErrOffsetOutOfRange, l, offset, leo)
	}
	if offset <= l.logStart {
		return nil
	}
	n := 0
	for n+1 < len(l.segs) && l.segs[n+1].base <= offset {
		n++
	}
	return l.advanceStart(offset, n)
}

// ApplyRetention deletes the oldest segments, never the active one, while
// they are older than RetentionMs by the clock or the log exceeds
// RetentionBytes, then advances the log start offset. It returns how many
// segments it deleted. It deletes nothing unless the cleanup policy includes
// delete (Config.Delete).
func (l *Log) ApplyRetention() (deleted int, err error) {
	return l.ApplyRetentionBelow(math.MaxInt64)
}

// ApplyRetentionBelow is ApplyRetention that also keeps every segment whose
// offsets reach limit (pass the high watermark so the log start offset never
// passes it, as Kafka does).
func (l *Log) ApplyRetentionBelow(limit int64) (deleted int, err error) {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return 0, err
	}
	if !l.cfg.Delete {
		return 0, nil
	}
	now := l.opts.Now().UnixMilli()
	// upper is the offset bound of segment i: the next segment's base.
	upper := func(i int) int64 { return l.segs[i+1].base }
	n := 0
	if l.cfg.RetentionMs >= 0 {
		for n+1 < len(l.segs) && upper(n) <= limit && now-l.segs[n].largestTimestamp() > l.cfg.RetentionMs {
			n++
		}
	}
	if l.cfg.RetentionBytes >= 0 {
		var total int64
		for _, s := range l.segs[n:] {
			total += s.size
		}
		diff := total - l.cfg.RetentionBytes
		for n+1 < len(l.segs) && upper(n) <= limit && diff-l.segs[n].size >= 0 {
			diff -= l.segs[n].size
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	return n, l.advanceStart(l.segs[n].base, n)
}

// advanceStart deletes the first n segments and raises the log start offset
// to at least offset. The caller holds flushMu and mu.
func (l *Log) advanceStart(offset int64, n int) error {
	for _, s := range l.segs[:n] {
		l.forgetUnflushed(s)
		if err := s.remove(); err != nil {
			l.segs = l.segs[1:]
			return l.fail(err)
		}
		l.segs = l.segs[1:]
	}
	l.logStart = max(l.logStart, offset, l.segs[0].base)
	l.recoveryPoint = max(l.recoveryPoint, l.logStart)
	if l.epochs.truncateFromStart(l.logStart) {
		if err := l.epochs.write(); err != nil {
			return l.fail(err)
		}
	}
	return nil
}
