package log

import (
	"errors"
	"fmt"
	"math"

	"github.com/gregorbroker/gregor/core/record"
)

// ErrOffsetOrder is a replicated batch whose offsets do not follow the log
// end offset; the follower must truncate or refetch, never write a hole
// backwards.
var ErrOffsetOrder = errors.New("log: replicated batch out of offset order")

// AppendReplicated writes one batch copied from the partition's leader at the
// offsets the leader gave it. The batch's base offset must be at or past the
// log end offset: a compacted leader log has gaps between batches, which the
// copy keeps. The batch's partition leader epoch starts an epoch entry at
// its base offset when it is newer than the latest known. Like Append it
// fsyncs only when flush.messages is reached.
func (l *Log) AppendReplicated(batch []byte) error {
	h, err := record.ParseHeader(batch)
	if err != nil {
		return fmt.Errorf("log: %s: append replicated: %w", l, err)
	}
	switch {
	case h.Size() != len(batch) || h.Length < record.MinLength:
		return fmt.Errorf("%w: log %s: append replicated: batch length field %d does not match %d bytes", ErrCorrupt, l, h.Length, len(batch))
	case h.LastOffsetDelta < 0:
		return fmt.Errorf("%w: log %s: append replicated: negative last offset delta %d", ErrCorrupt, l, h.LastOffsetDelta)
	case h.BaseOffset < 0 || h.BaseOffset > math.MaxInt64-int64(h.LastOffsetDelta)-1:
		return fmt.Errorf("%w: log %s: append replicated: base offset %d out of range", ErrCorrupt, l, h.BaseOffset)
	}

	flush, err := l.appendReplicatedLocked(batch, h)
	if err != nil || !flush {
		return err
	}
	return l.Sync()
}

// appendReplicatedLocked writes batch under mu and reports whether
// flush.messages asks for an fsync.
func (l *Log) appendReplicatedLocked(batch []byte, h record.Header) (flush bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return false, err
	}
	if int64(len(batch)) > l.cfg.SegmentBytes {
		return false, fmt.Errorf("%w: log %s: batch of %d bytes, segments hold %d", ErrBatchTooLarge, l, len(batch), l.cfg.SegmentBytes)
	}
	s := l.active()
	if h.BaseOffset < s.next {
		return false, fmt.Errorf("%w: log %s: append replicated: base offset %d is below the log end offset %d",
			ErrOffsetOrder, l, h.BaseOffset, s.next)
	}
	if l.shouldRoll(s, h) {
		if err := l.roll(); err != nil {
			return false, l.fail(err)
		}
		s = l.active()
	}
	if h.PartitionLeaderEpoch >= 0 {
		if last, ok := l.epochs.latest(); !ok || h.PartitionLeaderEpoch > last.epoch {
			if l.epochs.assign(h.PartitionLeaderEpoch, h.BaseOffset) {
				if err := l.epochs.write(); err != nil {
					return false, l.fail(err)
				}
			}
		}
	}
	if err := s.append(batch, h, l.cfg.IndexIntervalBytes); err != nil {
		return false, l.fail(err)
	}
	return l.noteAppendLocked(s.next), nil
}

// ResetTo deletes every segment and starts the log empty at offset, for a
// follower whose log end is below its leader's log start offset. The leader
// epoch history is cleared with the data.
func (l *Log) ResetTo(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("log: %s: reset to negative offset %d", l, offset)
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	return l.resetTo(offset)
}
