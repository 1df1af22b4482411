package log

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/record"
)

// loadState is what the data dir knows about a log before it is opened.
type loadState struct {
	recoveryPoint int64
	logStart      int64
	clean         bool // the broker shut down cleanly
	// health is the data dir's; nil gives the log one of its own.
	health *dirHealth
}

// openLog opens the partition directory dir, repairing what it must.
func openLog(dir, topic string, partition int32, cfg Config, opts Options, st loadState) (*Log, error) {
	opts = opts.withDefaults()
	l := &Log{
		topic: topic, partition: partition, dir: dir, opts: opts, cfg: cfg,
		logger: opts.Logger.With("topic", topic, "partition", partition),
	}
	l.hw.Store(-1)
	if l.health = st.health; l.health == nil {
		l.health = &dirHealth{path: dir, onOffline: opts.OnOffline}
	}
	bases, err := l.listSegments()
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			l.closeFiles()
		}
	}()
	now, fsys := opts.Now(), opts.FS
	for _, b := range bases {
		s, err := openSegment(fsys, dir, b, now)
		if err != nil {
			return nil, err
		}
		l.segs = append(l.segs, s)
	}

	// recoverFrom is the first segment whose batches must be verified.
	recoverFrom := len(l.segs)
	if !st.clean {
		recoverFrom = l.segmentFor(st.recoveryPoint)
	}
	for i, s := range l.segs[:min(recoverFrom, len(l.segs))] {
		if !l.loadSegment(s) {
			recoverFrom = i
			break
		}
	}
	rebuildEpochs := false
	epochs, err := loadEpochCache(opts.FS, filepath.Join(dir, leaderEpochFile))
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		l.logger.Warn("log: rebuilding leader epoch cache", "reason", err.Error())
		rebuildEpochs = true
	}
	l.epochs = epochs
	if recoverFrom < len(l.segs) {
		if err := l.recoverSegments(recoverFrom); err != nil {
			return nil, err
		}
	}
	for _, s := range l.segs {
		if err := l.loadTxnIndex(s); err != nil {
			return nil, err
		}
	}
	if len(l.segs) == 0 {
		s, err := createSegment(fsys, dir, st.logStart, now, l.logger)
		if err != nil {
			return nil, err
		}
		l.segs = []*segment{s}
		if err := syncDir(fsys, dir); err != nil {
			return nil, err
		}
	}
	active := l.active()
	if err := active.activate(cfg.IndexIntervalBytes, l.logger); err != nil {
		return nil, err
	}
	if err := active.loadFirstTimestamp(); err != nil {
		return nil, err
	}

	leo := active.next
	l.logStart = min(max(st.logStart, l.segs[0].base), leo)
	l.recoveryPoint = leo
	if rebuildEpochs {
		if err := l.rebuildEpochCache(); err != nil {
			return nil, err
		}
	}
	changed := l.epochs.truncateFromEnd(leo)
	changed = l.epochs.truncateFromStart(l.logStart) || changed
	if changed || rebuildEpochs {
		if err := l.epochs.write(); err != nil {
			return nil, err
		}
	}
	// Older segments are read rarely, by consumers catching up, retention
	// and the cleaner: their .log files open on first use and stay open.
	for _, s := range l.segs[:len(l.segs)-1] {
		if err := s.closeLog(); err != nil {
			return nil, fmt.Errorf("log: %s: %w", l, err)
		}
	}
	ok = true
	return l, nil
}

// listSegments returns the base offsets of the .log files in the directory,
// deleting leftovers of interrupted operations and orphaned index files.
func (l *Log) listSegments() ([]int64, error) {
	if err := l.recoverSwaps(); err != nil {
		return nil, err
	}
	entries, err := l.opts.FS.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("log: %s: %w", l, err)
	}
	logs := map[int64]bool{}
	var indexes []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			l.logger.Warn("log: ignoring unexpected directory", "path", filepath.Join(l.dir, name))
			continue
		}
		ext := filepath.Ext(name)
		switch {
		case ext == ".deleted" || ext == ".cleaned" || ext == ".tmp":
			l.logger.Warn("log: removing leftover file", "path", filepath.Join(l.dir, name))
			if err := l.opts.FS.Remove(filepath.Join(l.dir, name)); err != nil {
				return nil, fmt.Errorf("log: %s: %w", l, err)
			}
		case ext == logSuffix:
			base, ok := parseBase(name, logSuffix)
			if !ok {
				l.logger.Warn("log: ignoring file with an unexpected name", "path", filepath.Join(l.dir, name))
				continue
			}
			logs[base] = true
		case ext == indexSuffix || ext == timeIndexSuffix || ext == txnIndexSuffix:
			indexes = append(indexes, name)
		case name == leaderEpochFile || name == "partition.metadata" || ext == ".snapshot":
			// Owned by others or by later features.
		default:
			l.logger.Warn("log: ignoring unexpected file", "path", filepath.Join(l.dir, name))
		}
	}
	for _, name := range indexes {
		base, ok := parseBase(name, filepath.Ext(name))
		if ok && logs[base] {
			continue
		}
		l.logger.Warn("log: removing index file without a segment", "path", filepath.Join(l.dir, name))
		if err := l.opts.FS.Remove(filepath.Join(l.dir, name)); err != nil {
			return nil, fmt.Errorf("log: %s: %w", l, err)
		}
	}
	bases := make([]int64, 0, len(logs))
	for b := range logs {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases, nil
}

// parseBase parses a segment file name: a decimal base offset and suffix.
func parseBase(name, suffix string) (int64, bool) {
	digits := strings.TrimSuffix(name, suffix)
	if digits == "" || len(digits) > 20 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	b, err := strconv.ParseInt(digits, 10, 64)
	return b, err == nil
}

// loadSegment learns a segment's end offset and largest timestamp from its
// indexes and the batches after the last index entry, rebuilding indexes that
// fail the quick checks. It reports false when the segment's data needs
// recovery.
func (l *Log) loadSegment(s *segment) bool {
	lastOff, lastPos, lastTS, err := s.quickCheck()
	if err != nil {
		l.logger.Warn("log: rebuilding index", "segment", s.String(), "reason", err.Error())
		r, err := s.scanAndIndex(l.cfg.IndexIntervalBytes, false, nil)
		if err != nil || r.dataErr != nil {
			return false
		}
		if err := s.writeIndexes(r.si); err != nil {
			l.logger.Warn("log: cannot write rebuilt index", "segment", s.String(), "error", err.Error())
			return false
		}
		s.next, s.maxTS, s.maxTSOffset, s.firstTS = r.next, r.maxTS, r.maxTSOffset, r.firstTS
		return true
	}
	s.maxTS, s.maxTSOffset = lastTS.ts, lastTS.offset
	s.next = max(s.base, lastOff+1)
	if s.size == 0 {
		s.next = s.base
	}
	_, err = walkBatches(s, lastPos, s.size, walkOptions{base: s.base, minNext: s.base}, func(_ int64, h record.Header) error {
		if h.MaxTimestamp > s.maxTS {
			s.maxTS, s.maxTSOffset = h.MaxTimestamp, h.LastOffset()
		}
		s.next = h.NextOffset()
		return nil
	})
	if err != nil {
		l.logger.Warn("log: segment needs recovery", "segment", s.String(), "reason", err.Error())
		return false
	}
	return true
}

type timeOffset struct{ ts, offset int64 }

// quickCheck reads the first and last entries of both indexes and checks
// what can be checked without reading them whole, as Kafka does on load: the
// files exist, hold whole entries, and their last entries are plausible. It
// returns the last offset entry (base-1 and position 0 when empty) and the
// last time entry ((-1, base) when empty).
func (s *segment) quickCheck() (lastOff, lastPos int64, lastTS timeOffset, err error) {
	lastOff, lastTS = s.base-1, timeOffset{-1, s.base}
	off, err := readEnds(s.fs, s.path(indexSuffix), offsetEntrySize)
	if err != nil {
		return 0, 0, lastTS, err
	}
	tim, err := readEnds(s.fs, s.path(timeIndexSuffix), timeEntrySize)
	if err != nil {
		return 0, 0, lastTS, err
	}
	if len(off) > 0 {
		firstOff, firstPos := offsetEntry(off, s.base, 0)
		lastOff, lastPos = offsetEntry(off, s.base, 1)
		if firstOff < s.base || lastOff < firstOff || firstPos < 0 || lastPos < firstPos || lastPos >= s.size {
			return 0, 0, lastTS, fmt.Errorf("%w: offset index of %s: entries (%d at %d) .. (%d at %d) do not fit the segment", ErrCorruptIndex, s, firstOff, firstPos, lastOff, lastPos)
		}
	}
	if len(tim) > 0 {
		firstTS, firstOff := timeEntry(tim, s.base, 0)
		ts, o := timeEntry(tim, s.base, 1)
		if firstOff < s.base || o < firstOff || ts < firstTS {
			return 0, 0, lastTS, fmt.Errorf("%w: time index of %s: entries (%d at %d) .. (%d at %d) are out of order", ErrCorruptIndex, s, firstTS, firstOff, ts, o)
		}
		lastTS = timeOffset{ts, o}
	}
	return lastOff, lastPos, lastTS, nil
}

// readEnds returns an index file's first and last entries back to back, or
// nothing for an empty file.
func readEnds(fsys vfs.FS, path string, entrySize int) ([]byte, error) {
	f, err := vfs.Open(fsys, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size()%int64(entrySize) != 0 {
		return nil, fmt.Errorf("%w: %s: size %d is not a multiple of %d", ErrCorruptIndex, path, st.Size(), entrySize)
	}
	if st.Size() == 0 {
		return nil, nil
	}
	b := make([]byte, 2*entrySize)
	if _, err := f.ReadAt(b[:entrySize], 0); err != nil {
		return nil, err
	}
	if _, err := f.ReadAt(b[entrySize:], st.Size()-int64(entrySize)); err != nil {
		return nil, err
	}
	return b, nil
}

// recoverSegments verifies every batch of the segments from index from on,
// truncating the first torn or corrupt batch and everything after it, and
// rebuilds their indexes.
func (l *Log) recoverSegments(from int) error {
	for i := from; i < len(l.segs); i++ {
		s := l.segs[i]
		r, err := s.scanAndIndex(l.cfg.IndexIntervalBytes, true, func(h record.Header) {
			if e, ok := l.epochs.latest(); h.PartitionLeaderEpoch >= 0 && (!ok || h.PartitionLeaderEpoch > e.epoch) {
				l.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset)
			}
		})
		if err != nil {
			return err
		}
		s.next, s.maxTS, s.maxTSOffset, s.firstTS = r.next, r.maxTS, r.maxTSOffset, r.firstTS
		if r.validEnd < s.size {
			l.logger.Warn("log: truncating invalid data found during recovery",
				"segment", s.String(), "position", r.validEnd, "bytes", s.size-r.validEnd, "reason", fmt.Sprint(r.dataErr))
			f, err := s.file()
			if err == nil {
				err = f.Truncate(r.validEnd)
			}
			if err != nil {
				return fmt.Errorf("log: recover %s: %w", s, err)
			}
			s.size = r.validEnd
		}
		if err := s.writeIndexes(r.si); err != nil {
			return err
		}
		f, err := s.file()
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			return fmt.Errorf("log: recover %s: %w", s, err)
		}
		if r.dataErr != nil {
			for _, later := range l.segs[i+1:] {
				l.logger.Warn("log: deleting segment after a truncated one", "segment", later.String())
				if err := later.remove(); err != nil {
					return err
				}
			}
			l.segs = l.segs[:i+1]
			return syncDir(l.opts.FS, l.dir)
		}
	}
	return nil
}

// rebuildEpochCache recreates the leader epoch history from batch headers.
func (l *Log) rebuildEpochCache() error {
	l.epochs.entries = nil
	for _, s := range l.segs {
		_, err := walkBatches(s, 0, s.size, walkOptions{base: s.base, minNext: s.base}, func(_ int64, h record.Header) error {
			if e, ok := l.epochs.latest(); h.PartitionLeaderEpoch >= 0 && (!ok || h.PartitionLeaderEpoch > e.epoch) {
				l.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset)
			}
			return nil
		})
		if err != nil && !isDataError(err) {
			return fmt.Errorf("log: %s: rebuild leader epochs: %w", l, err)
		}
	}
	return nil
}
