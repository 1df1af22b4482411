package log

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/record"
)

// Compaction follows Kafka's log cleaner. The cleaner checkpoint (cleanedTo)
// splits the log into a compacted head and a dirty tail. A cleaning maps every
// key of the dirty part, up to the first uncleanable offset, to its latest
// offset, then rewrites the segments from the start of the log up to there,
// a group of segments at a time, keeping a record when no later record has
// its key. Offsets never change; the gaps left behind are skipped by reads.
// The active segment and anything reaching the caller's limit (the last
// stable offset) are never touched. Committed transactional records compact
// like any others and aborted ones are removed; a transaction marker stays
// while data of its transaction is left below it, then gets a delete horizon
// and is removed at a cleaning after delete.retention.ms (compact_txn.go).

// DefaultMaxMapBytes bounds the memory of a cleaning's key map (Kafka's
// log.cleaner.dedupe.buffer.size).
const DefaultMaxMapBytes = 128 << 20

// mapEntryOverhead approximates the memory of one key map entry beyond the
// key bytes: the map slot, string header and offset.
const mapEntryOverhead = 64

// ErrCleanAborted is returned when a segment being compacted changed under
// the cleaner (retention, truncation or deletion won the race); nothing was
// changed and the next cleaning starts over.
var ErrCleanAborted = errors.New("log: compaction aborted: the log changed meanwhile")

// ErrNoKeyInCompactedTopic rejects a record without a key in a compacted
// topic, as Kafka does (INVALID_RECORD at the protocol edge).
var ErrNoKeyInCompactedTopic = errors.New("log: compacted topic cannot accept a record without a key")

// CheckCompactedKeys returns ErrNoKeyInCompactedTopic if a record of the
// client batch b has a null key. The produce path makes the same check in
// its one pass over a batch (record.Inspect with RequireKeys, in
// partition.Check) rather than calling this. Decompression is bounded by
// maxDecompressed bytes; a malformed batch is ErrCorrupt-class.
func CheckCompactedKeys(b []byte, maxDecompressed int) error {
	_, err := record.ValidateKeyed(b, maxDecompressed)
	if errors.Is(err, record.ErrNullKey) {
		return fmt.Errorf("%w: %w", ErrNoKeyInCompactedTopic, err)
	}
	return err
}

// CleanOptions are the caller's bounds for one cleaning.
type CleanOptions struct {
	// Limit is the first offset that may not be compacted: the last
	// stable offset (Kafka's first uncleanable offset), never more, since
	// transactional data below it is compacted as committed unless the
	// aborted-transaction index says otherwise. Segments holding any
	// offset at or above it stay as they are.
	Limit int64
	// MaxMapBytes bounds the key map; 0 means DefaultMaxMapBytes. When the
	// dirty part does not fit, the cleaning stops at a segment boundary and
	// the next one continues from there.
	MaxMapBytes int64
	// Force cleans whenever there is anything to clean, ignoring
	// min.cleanable.dirty.ratio.
	Force bool
}

// CleanResult says what a cleaning did. Cleaned is false when the log was
// not eligible; the other fields are then zero.
type CleanResult struct {
	Cleaned bool
	// FirstDirtyOffset and EndOffset bound the dirty range that was mapped:
	// the cleaner checkpoint moved from the first to the second.
	FirstDirtyOffset, EndOffset int64
	// DirtyRatio is the dirty share of the cleanable bytes before cleaning.
	DirtyRatio               float64
	BytesRead, BytesWritten  int64
	RecordsRead, RecordsKept int64
	SegmentsRewritten        int
}

// segRef is a segment as a cleaning saw it when it planned.
type segRef struct {
	s     *segment
	f     vfs.File
	base  int64
	next  int64 // offset after its last batch
	upper int64 // the next segment's base: no offset of this one reaches it
	size  int64
	maxTS int64
}

// cleanPlan is what a cleaning will do, decided under the read lock.
type cleanPlan struct {
	cfg        Config
	now        int64
	firstDirty int64
	segs       []segRef // the segments that may be rewritten: all below the limit
	dirtyFrom  int      // index in segs of the first segment with dirty data
	all        []segRef // every segment, for producer state
	clean      int64    // bytes of segs[:dirtyFrom]
	dirty      int64    // bytes of segs[dirtyFrom:]
}

// CleanerCheckpoint returns the offset below which the log is compacted.
func (l *Log) CleanerCheckpoint() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cleanedTo
}

// Clean compacts the log if its cleanup policy includes compact and it is
// eligible: its dirty ratio reaches min.cleanable.dirty.ratio, its oldest
// dirty record is older than max.compaction.lag.ms, a tombstone's delete
// horizon has passed, or o.Force is set. See the comment at the top of this
// file for what it keeps.
func (l *Log) Clean(o CleanOptions) (res CleanResult, err error) {
	l.cleanMu.Lock()
	defer l.cleanMu.Unlock()
	defer func() {
		// Retention or truncation may close a planned segment's file while
		// it is read: the log changed, nothing was swapped in.
		if err != nil && errors.Is(err, os.ErrClosed) && !errors.Is(err, ErrCleanAborted) {
			err = fmt.Errorf("%w: %v", ErrCleanAborted, err)
		}
	}()
	p, ok, err := l.planClean(o)
	if err != nil || !ok {
		return CleanResult{}, err
	}
	res = CleanResult{Cleaned: true, FirstDirtyOffset: p.firstDirty, EndOffset: p.firstDirty}
	if p.clean+p.dirty > 0 {
		res.DirtyRatio = float64(p.dirty) / float64(p.clean+p.dirty)
	}
	maxMap := o.MaxMapBytes
	if maxMap <= 0 {
		maxMap = DefaultMaxMapBytes
	}
	aborted := l.abortedByProducer()
	keys, mapped, err := l.buildOffsetMap(p, maxMap, aborted)
	if err != nil {
		return CleanResult{}, err
	}
	p.segs = p.segs[:mapped]
	if mapped > p.dirtyFrom {
		res.EndOffset = p.segs[mapped-1].upper
	}
	producers, err := lastProducerBatches(p.all)
	if err != nil {
		return CleanResult{}, err
	}
	f := &filter{keys: keys, producers: producers, txns: newTxnTracker(aborted), now: p.now,
		retention: p.cfg.DeleteRetentionMs, horizon: -1}
	for _, g := range groupSegments(p.segs, p.cfg.SegmentBytes) {
		if err := l.cleanGroup(p, g, f, &res); err != nil && err != errUnchanged {
			return CleanResult{}, err
		}
	}
	l.mu.Lock()
	l.cleanedTo = max(l.cleanedTo, res.EndOffset)
	l.deleteHorizon = f.horizon
	l.mu.Unlock()
	return res, nil
}

// planClean decides whether the log is eligible and what to clean.
func (l *Log) planClean(o CleanOptions) (cleanPlan, bool, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return cleanPlan{}, false, ErrClosed
	}
	if !l.cfg.Compact || l.writable() != nil {
		return cleanPlan{}, false, nil
	}
	p := cleanPlan{cfg: l.cfg, now: l.opts.Now().UnixMilli()}
	leo := l.active().next
	p.firstDirty = l.cleanedTo
	if p.firstDirty < l.logStart || p.firstDirty > leo {
		p.firstDirty = l.logStart
	}
	for i, s := range l.segs {
		f, err := s.file()
		if err != nil {
			return cleanPlan{}, false, err
		}
		r := segRef{s: s, f: f, base: s.base, next: s.next, upper: math.MaxInt64, size: s.size, maxTS: s.largestTimestamp()}
		if i+1 < len(l.segs) {
			r.upper = l.segs[i+1].base
		}
		p.all = append(p.all, r)
	}
	limit := min(o.Limit, l.active().base)
	n := 0
	for n+1 < len(p.all) && p.all[n].upper <= limit {
		n++
	}
	p.segs = p.all[:n]
	p.dirtyFrom = n
	for i, r := range p.segs {
		if r.upper > p.firstDirty {
			p.dirtyFrom = i
			break
		}
	}
	if lag := p.cfg.MinCompactionLagMs; lag > 0 {
		for i := p.dirtyFrom; i < len(p.segs); i++ {
			if p.now-p.segs[i].maxTS < lag {
				p.segs = p.segs[:i]
				break
			}
		}
	}
	for i, r := range p.segs {
		if i < p.dirtyFrom {
			p.clean += r.size
		} else {
			p.dirty += r.size
		}
	}
	if len(p.segs) == 0 {
		return p, false, nil
	}
	if l.deleteHorizon == 0 {
		h, err := earliestHorizon(p.segs[:p.dirtyFrom])
		if err != nil {
			return p, false, err
		}
		l.deleteHorizon = h // a benign race under the read lock: cleanMu is held
	}
	hasDirty := p.dirtyFrom < len(p.segs)
	switch {
	case o.Force:
		return p, true, nil
	case l.deleteHorizon > 0 && l.deleteHorizon <= p.now:
		return p, true, nil
	case !hasDirty || p.dirty == 0:
		return p, false, nil
	case float64(p.dirty)/float64(p.clean+p.dirty) >= p.cfg.MinCleanableDirtyRatio:
		return p, true, nil
	}
	ts, err := firstBatchTimestamp(p.segs[p.dirtyFrom])
	if err != nil {
		return p, false, err
	}
	return p, ts >= 0 && p.now-ts > p.cfg.MaxCompactionLagMs, nil
}

// earliestHorizon is the smallest delete horizon among the batch headers of
// segs that carry one, or -1 when none does.
func earliestHorizon(segs []segRef) (int64, error) {
	h := int64(-1)
	for _, r := range segs {
		_, err := walkBatches(r.f, 0, r.size, walkOptions{base: r.base, minNext: r.base}, func(_ int64, bh record.Header) error {
			if hasDeleteHorizon(bh) && (h < 0 || bh.FirstTimestamp < h) {
				h = bh.FirstTimestamp
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("log: segment %s: %w", r.s, err)
		}
	}
	return h, nil
}

// firstBatchTimestamp is the MaxTimestamp of a segment's first batch, -1
// when the segment is empty.
func firstBatchTimestamp(r segRef) (int64, error) {
	if r.size == 0 {
		return -1, nil
	}
	sc := newFileScanner(r.f, r.size)
	defer sc.release()
	h, err := sc.header(0)
	if err != nil {
		return 0, fmt.Errorf("log: segment %s: %w", r.s, err)
	}
	return h.MaxTimestamp, nil
}

// readBatches calls fn with every batch of a planned segment, whose CRC it
// checks. The bytes are valid only during the call.
func readBatches(r segRef, fn func(h record.Header, b []byte) error) error {
	var buf []byte
	_, err := walkBatches(r.f, 0, r.size, walkOptions{base: r.base, minNext: r.base}, func(pos int64, h record.Header) error {
		if cap(buf) < h.Size() {
			buf = make([]byte, h.Size())
		}
		buf = buf[:h.Size()]
		if _, err := r.f.ReadAt(buf, pos); err != nil {
			return fmt.Errorf("%w: read at %d: %v", ErrCleanAborted, pos, err)
		}
		if crc := record.Checksum(buf); crc != h.CRC {
			return fmt.Errorf("%w: position %d: crc mismatch: stored %08x, computed %08x", ErrCorrupt, pos, h.CRC, crc)
		}
		return fn(h, buf)
	})
	if err != nil {
		return fmt.Errorf("log: compact %s: %w", r.s, err)
	}
	return nil
}

// buildOffsetMap maps every key of the dirty segments to its latest offset.
// Committed transactional records count like any others; aborted ones (by
// the aborted-transaction index) and control batches are left out, so an
// aborted record never hides a committed one, as in Kafka's cleaner. The
// caller's limit keeps open transactions out: it is the last stable offset.
// It returns how many of p.segs the map covers: all of them, or fewer when
// maxBytes would be exceeded (never fewer than one dirty segment).
func (l *Log) buildOffsetMap(p cleanPlan, maxBytes int64, aborted map[int64][]AbortedTxn) (map[string]int64, int, error) {
	keys := map[string]int64{}
	var used int64
	type undo struct {
		key  string
		prev int64 // -1 when the key was new
	}
	var undos []undo
	for i := p.dirtyFrom; i < len(p.segs); i++ {
		undos = undos[:0]
		full := false
		err := readBatches(p.segs[i], func(h record.Header, b []byte) error {
			if h.LastOffset() < p.firstDirty || h.IsControl() || (h.IsTransactional() && isAborted(aborted, h)) {
				return nil
			}
			return record.Records(b, maxRecordsBytes, func(r record.Record) error {
				off := h.BaseOffset + int64(r.OffsetDelta)
				if r.Key == nil || off < p.firstDirty {
					return nil
				}
				prev, ok := keys[string(r.Key)]
				if !ok {
					if used+int64(len(r.Key))+mapEntryOverhead > maxBytes {
						full = true
						return errStop
					}
					used += int64(len(r.Key)) + mapEntryOverhead
					prev = -1
				}
				k := string(r.Key)
				undos = append(undos, undo{k, prev})
				keys[k] = off
				return nil
			})
		})
		if full {
			if i == p.dirtyFrom {
				return nil, 0, fmt.Errorf("log: %s: compact: segment %s holds more keys than a %d-byte offset map", l, p.segs[i].s, maxBytes)
			}
			for j := len(undos) - 1; j >= 0; j-- {
				if u := undos[j]; u.prev < 0 {
					delete(keys, u.key)
				} else {
					keys[u.key] = u.prev
				}
			}
			l.logger.Info("log: offset map full; compacting part of the dirty log", "segments", i-p.dirtyFrom)
			return keys, i, nil
		}
		if err != nil {
			return nil, 0, err
		}
	}
	return keys, len(p.segs), nil
}

// lastProducerBatches maps each producer id to the last offset of its last
// data batch in the whole log. That batch carries the producer's last
// sequence, so the cleaner keeps its header even when it empties it.
func lastProducerBatches(all []segRef) (map[int64]int64, error) {
	out := map[int64]int64{}
	for _, r := range all {
		_, err := walkBatches(r.f, 0, r.size, walkOptions{base: r.base, minNext: r.base}, func(_ int64, h record.Header) error {
			if h.ProducerID >= 0 && !h.IsControl() {
				out[h.ProducerID] = h.LastOffset()
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("log: compact %s: %w", r.s, err)
		}
	}
	return out, nil
}

// groupSegments splits segs into runs rewritten together, as Kafka groups
// them: a run's total size stays within segmentBytes and its offsets fit one
// segment's 32-bit relative offsets.
func groupSegments(segs []segRef, segmentBytes int64) [][]segRef {
	var groups [][]segRef
	for i := 0; i < len(segs); {
		j, size := i+1, segs[i].size
		for j < len(segs) && size+segs[j].size <= segmentBytes && segs[j].upper-1-segs[i].base <= math.MaxInt32 {
			size += segs[j].size
			j++
		}
		groups = append(groups, segs[i:j])
		i = j
	}
	return groups
}
