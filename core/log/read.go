package log

import (
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/core/record"
)

// maxRecordsBytes bounds decompression when a lookup must decode records.
const maxRecordsBytes = 256 << 20

// Read returns whole batches starting with the batch that holds offset,
// keeping only batches whose last offset is below maxOffset (exclusive: the
// high watermark), at most maxBytes in total. When the first batch alone
// exceeds maxBytes it is returned by itself if minOneBatch is set (KIP-74),
// and nothing is returned otherwise. The result is nil when nothing lies below
// maxOffset. Batches come from one segment per call; read again from the next
// offset for more. ErrOffsetOutOfRange when offset is below the log start
// offset or past the log end offset.
func (l *Log) Read(offset int64, maxBytes int, maxOffset int64, minOneBatch bool) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.readLocked(nil, offset, maxBytes, maxOffset, minOneBatch)
}

// readLocked implements Read into dst's storage; the caller holds mu.
func (l *Log) readLocked(dst []byte, offset int64, maxBytes int, maxOffset int64, minOneBatch bool) ([]byte, error) {
	if l.closed {
		return nil, ErrClosed
	}
	if err := l.health.offline(); err != nil {
		return nil, err
	}
	leo := l.active().next
	if offset < l.logStart || offset > leo {
		return nil, fmt.Errorf("%w: log %s: offset %d outside [%d, %d]", ErrOffsetOutOfRange, l, offset, l.logStart, leo)
	}
	if offset == leo || offset >= maxOffset {
		return nil, nil
	}
	s, si, pos, h, ok, err := l.locate(offset)
	if err != nil || !ok || h.LastOffset() >= maxOffset {
		return nil, err
	}
	end := s.size
	if maxOffset < s.next {
		if p, _, found, err := s.translate(si, maxOffset, pos); err != nil {
			return nil, err
		} else if found {
			end = p
		}
	}
	first := int64(h.Size())
	n := min(int64(max(maxBytes, 0)), end-pos)
	if n < first {
		if !minOneBatch {
			return nil, nil
		}
		n = first
	}
	buf, err := s.readAt(dst, pos, int(n))
	if err != nil {
		return nil, err
	}
	it := record.Batches(buf)
	whole := 0
	for it.Next() {
		whole = it.Consumed()
	}
	if whole == 0 {
		return nil, fmt.Errorf("%w: log %s: segment %s at position %d: %v", ErrCorrupt, l, s, pos, it.Err())
	}
	return buf[:whole], nil
}

// locate finds the first batch whose last offset is >= offset, searching the
// segment whose range holds offset and then later ones. The caller holds mu.
func (l *Log) locate(offset int64) (s *segment, si *segIndex, pos int64, h record.Header, found bool, err error) {
	for i := l.segmentFor(offset); i < len(l.segs); i++ {
		s = l.segs[i]
		if s.size == 0 {
			continue
		}
		if si, err = s.indexes(l.cfg.IndexIntervalBytes, l.logger); err != nil {
			return nil, nil, 0, h, false, err
		}
		if pos, h, found, err = s.translate(si, offset, 0); err != nil || found {
			return s, si, pos, h, found, err
		}
	}
	return nil, nil, 0, h, false, nil
}

// Scan calls fn for every batch whose last offset is >= from, in offset order,
// starting no lower than the log start offset and ending at the log end offset
// seen as the scan proceeds. The batch bytes are valid only during the call.
// fn runs without the log's lock held; an error from fn stops the scan and is
// returned.
func (l *Log) Scan(from int64, fn func(h record.Header, batch []byte) error) error {
	const chunk = 1 << 20
	var buf []byte
	cursor := from
	for {
		l.mu.RLock()
		if l.closed {
			l.mu.RUnlock()
			return ErrClosed
		}
		cursor = max(cursor, l.logStart)
		leo := l.active().next
		var err error
		if cursor < leo {
			buf, err = l.readLocked(buf[:0], cursor, chunk, leo, true)
		} else {
			buf = buf[:0]
		}
		l.mu.RUnlock()
		if err != nil {
			return err
		}
		if len(buf) == 0 {
			return nil
		}
		it := record.Batches(buf)
		for it.Next() {
			if err := fn(it.Header(), it.Batch()); err != nil {
				return err
			}
			cursor = it.Header().NextOffset()
		}
		if it.Err() != nil {
			return fmt.Errorf("log: %s: scan: %w", l, it.Err())
		}
	}
}

// OffsetForTimestamp answers ListOffsets by timestamp: the earliest record at
// or after the log start offset whose timestamp is >= ts, with that timestamp
// and its batch's partition leader epoch (-1 when the batch has none). found is
// false when no record is that new.
func (l *Log) OffsetForTimestamp(ts int64) (offset int64, timestamp int64, leaderEpoch int32, found bool, err error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return 0, 0, 0, false, ErrClosed
	}
	for _, s := range l.segs {
		if s.size == 0 || s.next <= l.logStart || s.largestTimestamp() < ts {
			continue
		}
		si, err := s.indexes(l.cfg.IndexIntervalBytes, l.logger)
		if err != nil {
			return 0, 0, 0, false, err
		}
		_, tsOffset := lookupTime(si.tim, s.base, ts)
		_, pos := lookupOffset(si.off, s.base, max(tsOffset, l.logStart))
		offset, timestamp, leaderEpoch, found, err = l.searchTimestamp(s, pos, ts)
		if err != nil || found {
			return offset, timestamp, leaderEpoch, found, err
		}
	}
	return -1, -1, -1, false, nil
}

// errFound ends a record walk once the wanted record is seen.
var errFound = errors.New("log: found")

// searchTimestamp scans segment s from pos for the first record with a
// timestamp >= ts at or after the log start offset, decoding only batches
// whose MaxTimestamp reaches ts.
func (l *Log) searchTimestamp(s *segment, pos int64, ts int64) (int64, int64, int32, bool, error) {
	var (
		offset, timestamp int64
		epoch             int32
		found             bool
		buf               []byte
		recErr            error
	)
	_, err := walkBatches(s, pos, s.size, walkOptions{base: s.base, minNext: s.base}, func(bp int64, h record.Header) error {
		if h.MaxTimestamp < ts || h.LastOffset() < l.logStart {
			return nil
		}
		epoch = h.PartitionLeaderEpoch
		if h.LogAppendTime() {
			offset, timestamp, found = max(h.BaseOffset, l.logStart), h.MaxTimestamp, true
			return errStop
		}
		var err error
		if buf, err = s.readAt(buf, bp, h.Size()); err != nil {
			recErr = err
			return errStop
		}
		err = record.Records(buf, maxRecordsBytes, func(r record.Record) error {
			o := h.BaseOffset + int64(r.OffsetDelta)
			if t := r.Timestamp(h); t >= ts && o >= l.logStart {
				offset, timestamp, found = o, t, true
				return errFound
			}
			return nil
		})
		if err == errFound {
			err = errStop
		} else if err != nil {
			recErr = fmt.Errorf("log: %s: batch at %d: %w", s, bp, err)
			err = errStop
		}
		return err
	})
	if recErr != nil {
		return 0, 0, 0, false, recErr
	}
	if err != nil && err != errStop {
		return 0, 0, 0, false, fmt.Errorf("log: %s: %w", s, err)
	}
	if !found {
		return 0, 0, 0, false, nil
	}
	return offset, timestamp, epoch, true, nil
}

// MaxTimestamp answers ListOffsets with MAX_TIMESTAMP (-3): the offset of the
// first record carrying the log's largest timestamp, that timestamp and its
// batch's leader epoch; (-1, -1, -1) when no batch has a timestamp.
func (l *Log) MaxTimestamp() (offset int64, timestamp int64, leaderEpoch int32, err error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return 0, 0, 0, ErrClosed
	}
	var best *segment
	for _, s := range l.segs {
		if s.maxTS >= 0 && (best == nil || s.maxTS > best.maxTS) {
			best = s
		}
	}
	if best == nil {
		return -1, -1, -1, nil
	}
	si, err := best.indexes(l.cfg.IndexIntervalBytes, l.logger)
	if err != nil {
		return 0, 0, 0, err
	}
	_, pos := lookupOffset(si.off, best.base, best.maxTSOffset)
	var h record.Header
	var bp int64
	found := false
	_, err = walkBatches(best, pos, best.size, walkOptions{base: best.base, minNext: best.base}, func(p int64, bh record.Header) error {
		if bh.MaxTimestamp == best.maxTS {
			h, bp, found = bh, p, true
			return errStop
		}
		return nil
	})
	if !found {
		if err != nil {
			return 0, 0, 0, fmt.Errorf("log: %s: %w", best, err)
		}
		return -1, -1, -1, nil
	}
	offset = h.BaseOffset
	if !h.LogAppendTime() {
		batch, err := best.readAt(nil, bp, h.Size())
		if err != nil {
			return 0, 0, 0, err
		}
		err = record.Records(batch, maxRecordsBytes, func(r record.Record) error {
			if r.Timestamp(h) == h.MaxTimestamp {
				offset = h.BaseOffset + int64(r.OffsetDelta)
				return errFound
			}
			return nil
		})
		if err != nil && err != errFound {
			return 0, 0, 0, fmt.Errorf("log: %s: batch at %d: %w", best, bp, err)
		}
	}
	return offset, h.MaxTimestamp, h.PartitionLeaderEpoch, nil
}
