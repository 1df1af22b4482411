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
func (p *Partition) ReadRange(offset int64, maxBytes int, minOneBatch, committed bool) (res RangeResult, ok bool, err error) {
	off := p.Offsets()
	res.Offsets = off
	if err := p.Offline(); err != nil {
		return res, true, err
	}
	if offset < off.LogStartOffset || offset > off.LogEndOffset {
		return res, true, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, off.LogStartOffset, off.LogEndOffset)
	}
	bound := off.HighWatermark
	if committed {
		bound = off.LastStableOffset
	}
	if offset >= bound {
		return res, true, nil
	}
	r, ok, err := p.log.ReadRange(offset, maxBytes, bound, minOneBatch)
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
	p.traffic.bytesOut.Add(int64(r.Len))
	if committed && r.Len > 0 {
		res.Aborted = p.log.AbortedTxns(offset, r.NextOffset)
	}
	return res, true, nil
}

// ReadReplicaRange is ReadReplica for a zero-copy send to a follower: whole
// batches up to the log end offset, as a range of the segment file.
func (p *Partition) ReadReplicaRange(offset int64, maxBytes int) (res RangeResult, ok bool, err error) {
	off := p.Offsets()
	res.Offsets = off
	if err := p.Offline(); err != nil {
		return res, true, err
	}
	if offset < off.LogStartOffset || offset > off.LogEndOffset {
		return res, true, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, off.LogStartOffset, off.LogEndOffset)
	}
	if offset == off.LogEndOffset {
		return res, true, nil
	}
	r, ok, err := p.log.ReadRange(offset, maxBytes, off.LogEndOffset, true)
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
