package log

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/gregorbroker/gregor/core/record"
)

// Suffixes of a compacted segment's files before it replaces the originals:
// written as ".cleaned", renamed to ".swap" once it may replace them, and
// renamed to the plain names when the originals are gone. A crash leaves
// ".cleaned" files to delete and ".swap" files to finish (recoverSwaps).
const (
	cleanedSuffix = ".cleaned"
	swapSuffix    = ".swap"
)

// filter decides, batch by batch, what a cleaning keeps.
type filter struct {
	keys      map[string]int64 // key -> latest offset in the dirty range
	producers map[int64]int64  // producer id -> last offset of its last data batch
	txns      *txnTracker      // the transactions met so far
	now       int64
	retention int64 // delete.retention.ms
	// horizon is the earliest delete horizon of a written batch that still
	// holds tombstones; -1 when none does.
	horizon int64
	kept    keptBatch
}

// filterBatch appends to dst what replaces the batch b: b itself, a batch
// rewritten with the retained records, Kafka's empty batch, or nothing.
// changed reports whether dst got anything but b.
func (f *filter) filterBatch(dst []byte, h record.Header, b []byte, res *CleanResult) ([]byte, bool, error) {
	if h.IsControl() {
		return f.filterMarker(dst, h, b, res)
	}
	if f.txns.onData(h) {
		// Aborted data is removed, as Kafka's cleaner does: no reader may
		// see it anyway once read_committed, and its abort marker and
		// index entry stay. The producer's last batch keeps its header,
		// which carries the producer's last sequence.
		res.RecordsRead += int64(h.LastOffsetDelta) + 1
		if f.producers[h.ProducerID] == h.LastOffset() {
			out, err := encodeRetained(dst, h, nil, -1)
			return out, true, err
		}
		return dst, true, nil
	}
	// Non-transactional and committed transactional data compact alike.
	f.kept.reset()
	horizonSet := hasDeleteHorizon(h)
	var total int64
	tombstones := false
	err := record.Records(b, maxRecordsBytes, func(r record.Record) error {
		total++
		off := h.BaseOffset + int64(r.OffsetDelta)
		if r.Key == nil {
			return nil // Kafka's cleaner drops keyless records of a compacted log
		}
		if latest, ok := f.keys[string(r.Key)]; ok && off < latest {
			return nil
		}
		if r.Value == nil {
			if horizonSet && f.now >= h.FirstTimestamp {
				return nil // the tombstone outlived delete.retention.ms
			}
			tombstones = true
		}
		f.kept.add(h, r)
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
	}
	res.RecordsRead += total
	res.RecordsKept += int64(len(f.kept.recs))
	horizon := int64(-1)
	switch {
	case horizonSet:
		horizon = h.FirstTimestamp
	case tombstones:
		horizon = f.now + f.retention
		if f.retention > math.MaxInt64-f.now {
			horizon = math.MaxInt64
		}
	}
	if tombstones && (f.horizon < 0 || horizon < f.horizon) {
		f.horizon = horizon
	}
	if int64(len(f.kept.recs)) == total && (horizonSet || !tombstones) {
		return append(dst, b...), false, nil
	}
	if len(f.kept.recs) == 0 {
		if h.ProducerID >= 0 && f.producers[h.ProducerID] == h.LastOffset() {
			out, err := encodeRetained(dst, h, nil, -1)
			return out, true, err
		}
		return dst, true, nil
	}
	out, err := encodeRetained(dst, h, f.kept.recs, horizon)
	return out, true, err
}

// abortedByProducer groups the aborted transactions of the log by producer.
func (l *Log) abortedByProducer() map[int64][]AbortedTxn {
	out := map[int64][]AbortedTxn{}
	for _, t := range l.AbortedTxns(0, math.MaxInt64) {
		out[t.ProducerID] = append(out[t.ProducerID], t)
	}
	return out
}

// cleanedPath names a file of the compacted segment at base before its swap.
func (l *Log) cleanedPath(base int64, suffix, state string) string {
	return filepath.Join(l.dir, segmentName(base, suffix)+state)
}

// cleanGroup rewrites the segments of g into one segment and swaps it in.
// A lone segment that would come out unchanged is left alone.
func (l *Log) cleanGroup(p cleanPlan, g []segRef, f *filter, res *CleanResult) (err error) {
	base := g[0].base
	path := l.cleanedPath(base, logSuffix, cleanedSuffix)
	file, err := l.opts.FS.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("log: %s: compact: %w", l, err)
	}
	defer func() {
		if file != nil {
			_ = file.Close()
		}
		if err != nil {
			l.removeCleaned(base)
		}
	}()
	w := bufio.NewWriterSize(file, 1<<20)
	changed := len(g) > 1
	var size int64
	var mtime time.Time
	var out []byte
	for _, r := range g {
		if st, err := r.f.Stat(); err == nil && st.ModTime().After(mtime) {
			mtime = st.ModTime()
		}
		err := readBatches(r, func(h record.Header, b []byte) error {
			res.BytesRead += int64(len(b))
			var ch bool
			var err error
			if out, ch, err = f.filterBatch(out[:0], h, b, res); err != nil {
				return err
			}
			changed = changed || ch
			size += int64(len(out))
			_, err = w.Write(out)
			return err
		})
		if err != nil {
			return err
		}
	}
	if !changed {
		return errUnchanged
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("log: %s: compact: write %s: %w", l, path, err)
	}
	if err := file.Sync(); err != nil {
		return fmt.Errorf("log: %s: compact: fsync %s: %w", l, path, err)
	}
	tmp := &segment{base: base, dir: l.dir, size: size}
	tmp.logf.Store(&segFile{file})
	sc, err := tmp.scanAndIndex(p.cfg.IndexIntervalBytes, false, nil)
	if err == nil && sc.dataErr != nil {
		err = fmt.Errorf("log: %s: compact: rewritten segment %d does not read back: %w", l, base, sc.dataErr)
	}
	if err != nil {
		return err
	}
	if err := writeFileSync(l.opts.FS, l.cleanedPath(base, indexSuffix, cleanedSuffix), sc.si.off); err != nil {
		return err
	}
	if err := writeFileSync(l.opts.FS, l.cleanedPath(base, timeIndexSuffix, cleanedSuffix), sc.si.tim); err != nil {
		return err
	}
	err = file.Close()
	file = nil
	if err != nil {
		return fmt.Errorf("log: %s: compact: %w", l, err)
	}
	// Time-based retention of a segment without timestamps falls back to
	// the file's age; the rewrite keeps that of the newest original.
	if !mtime.IsZero() {
		_ = l.opts.FS.Chtimes(path, mtime, mtime)
	}
	if err := l.swapIn(g, base, sc, f); err != nil {
		return err
	}
	res.BytesWritten += size
	res.SegmentsRewritten += len(g)
	return nil
}

// errUnchanged ends cleanGroup for a group that needs no rewrite.
var errUnchanged = errors.New("log: compact: segment unchanged")

// removeCleaned deletes the ".cleaned" files of base.
func (l *Log) removeCleaned(base int64) {
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix, txnIndexSuffix} {
		if err := l.opts.FS.Remove(l.cleanedPath(base, suffix, cleanedSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.logger.Warn("log: cannot remove compaction leftover", "error", err.Error())
		}
	}
}

// swapIn replaces the segments of g with the compacted segment written as
// ".cleaned" files at base, if g is still what the log holds.
func (l *Log) swapIn(g []segRef, base int64, sc segScan, f *filter) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	j := -1
	for i, s := range l.segs {
		if s == g[0].s {
			j = i
			break
		}
	}
	valid := j >= 0 && j+len(g) < len(l.segs)
	for k := 0; valid && k < len(g); k++ {
		valid = l.segs[j+k] == g[k].s && g[k].s.size == g[k].size
	}
	if !valid {
		return ErrCleanAborted
	}
	aborted, err := l.mergeTxnIndexes(g, base, f.txns.dropped)
	if err != nil {
		return err
	}
	// The compacted segment becomes the replacement of record: from here a
	// crash completes the swap when the log is opened again.
	for _, suffix := range []string{indexSuffix, timeIndexSuffix, logSuffix} {
		if err := l.opts.FS.Rename(l.cleanedPath(base, suffix, cleanedSuffix), l.cleanedPath(base, suffix, swapSuffix)); err != nil {
			return fmt.Errorf("log: %s: compact: %w", l, err)
		}
	}
	if err := syncDir(l.opts.FS, l.dir); err != nil {
		return err
	}
	for _, r := range g[1:] {
		l.forgetUnflushed(r.s)
		if err := r.s.remove(); err != nil {
			return l.fail(err)
		}
	}
	first := g[0].s
	l.forgetUnflushed(first)
	_ = first.close()
	for _, suffix := range []string{indexSuffix, timeIndexSuffix, logSuffix} {
		if err := l.opts.FS.Rename(l.cleanedPath(base, suffix, swapSuffix), filepath.Join(l.dir, segmentName(base, suffix))); err != nil {
			return l.fail(err)
		}
	}
	if err := syncDir(l.opts.FS, l.dir); err != nil {
		return l.fail(err)
	}
	ns, err := openSegment(l.opts.FS, l.dir, base, l.opts.Now())
	if err != nil {
		return l.fail(err)
	}
	ns.next, ns.maxTS, ns.maxTSOffset, ns.firstTS = sc.next, sc.maxTS, sc.maxTSOffset, sc.firstTS
	ns.aborted = aborted
	segs := append([]*segment(nil), l.segs[:j]...)
	segs = append(segs, ns)
	l.segs = append(segs, l.segs[j+len(g):]...)
	return nil
}

// mergeTxnIndexes gives the first segment of g the .txnindex entries of
// every segment of g, which the compacted segment at base replaces: the
// transactional batches and abort markers are kept whole, so read_committed
// fetches must still be told which of them were aborted. It is written
// before the swap's commit point, atomically: until then the first segment
// loads only the entries that lie in it (the others stay in their own
// segments' files), and from then the compacted segment loads them all.
// An entry whose abort marker this cleaning removed is left out: no data of
// its transaction is left anywhere, so it is not missed on either side.
// The caller holds mu.
func (l *Log) mergeTxnIndexes(g []segRef, base int64, dropped map[AbortedTxn]bool) ([]AbortedTxn, error) {
	var merged []AbortedTxn
	n := 0
	for _, r := range g {
		n += len(r.s.aborted)
		for _, a := range r.s.aborted {
			if !dropped[a] {
				merged = append(merged, a)
			}
		}
	}
	if len(merged) == len(g[0].s.aborted) && n == len(merged) {
		return merged, nil
	}
	if len(merged) == 0 {
		if err := l.opts.FS.Remove(filepath.Join(l.dir, segmentName(base, txnIndexSuffix))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("log: %s: compact: %w", l, err)
		}
		return nil, syncDir(l.opts.FS, l.dir)
	}
	tmp := l.cleanedPath(base, txnIndexSuffix, cleanedSuffix)
	if err := writeFileSync(l.opts.FS, tmp, EncodeAbortedTxns(merged)); err != nil {
		return nil, fmt.Errorf("log: %s: compact: %w", l, err)
	}
	if err := l.opts.FS.Rename(tmp, filepath.Join(l.dir, segmentName(base, txnIndexSuffix))); err != nil {
		return nil, fmt.Errorf("log: %s: compact: %w", l, err)
	}
	if err := syncDir(l.opts.FS, l.dir); err != nil {
		return nil, err
	}
	return merged, nil
}
