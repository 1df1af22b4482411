package partition

import (
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/core/log"
)

// RangeResult is a read answered with a range of the segment file rather
// than bytes (see log.FileRange): the same batches Read or ReadCommitted
// would return. The caller closes Range.
type RangeResult struct {
	Range log.FileRange
	Offsets
	Aborted []log.AbortedTxn
}

// ReadRange is Read, or ReadCommitted when committed is set, for a
// zero-copy send. ok is false when the log cannot give a range; the caller
// then reads bytes.
func (p *Partition) ReadRange(offset int64, maxBytes int, minOneBatch, committed bool) (RangeResult, bool, error) {
	bound := func(off Offsets) int64 {
		if committed {
			return off.LastStableOffset
		}
		return off.HighWatermark
	}
	res, ok, err := p.readRange(offset, maxBytes, bound, minOneBatch)
	if ok && err == nil && res.Range.Len > 0 {
		p.traffic.bytesOut.Add(int64(res.Range.Len))
		if committed {
			res.Aborted = p.log.AbortedTxns(offset, res.Range.NextOffset)
		}
	}
	return res, ok, err
}

// ReadReplicaRange is ReadReplica for a zero-copy send to a follower: whole
// batches up to the log end offset, as a range of the segment file.
func (p *Partition) ReadReplicaRange(offset int64, maxBytes int) (RangeResult, bool, error) {
	return p.readRange(offset, maxBytes, func(off Offsets) int64 { return off.LogEndOffset }, true)
}

// readRange reads whole batches from offset below bound(offsets) as a file
// range, with the read functions' offset checks and error classes.
func (p *Partition) readRange(offset int64, maxBytes int, bound func(Offsets) int64, minOneBatch bool) (res RangeResult, ok bool, err error) {
	off := p.Offsets()
	res.Offsets = off
	if err := p.Offline(); err != nil {
		return res, true, err
	}
	if offset < off.LogStartOffset || offset > off.LogEndOffset {
		return res, true, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, off.LogStartOffset, off.LogEndOffset)
	}
	end := bound(off)
	if offset >= end {
		return res, true, nil
	}
	r, ok, err := p.log.ReadRange(offset, maxBytes, end, minOneBatch)
	if !ok {
		return res, false, nil
	}
	if err != nil {
		if errors.Is(err, log.ErrOffsetOutOfRange) {
			return res, true, fmt.Errorf("%w: %w", ErrOffsetOutOfRange, err)
		}
		return res, true, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	res.Range = r
	return res, true, nil
}
