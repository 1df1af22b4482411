package partition

import (
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/record"
)

// AppendAt appends batches copied from another cluster's partition at their
// own base offsets, for a mirror link: offsets, timestamps, producer ids and
// sequences stay the source's, so the copy's offsets equal the source's.
// Each batch's base offset must be at or past the log end offset and past
// the previous batch; gaps (compaction, deleted records) are kept. An empty
// log starts at the first batch's base offset. Control and transactional
// batches are accepted and update the producer and transaction state as a
// follower's would. Only the partition leader epoch is this cluster's: it
// belongs to this cluster's replication, which truncates followers by it.
//
// Every batch is checked (framing, magic v2, CRC) before any is appended; a
// batch below the log end offset is ErrOffsetOutOfRange.
func (p *Partition) AppendAt(records []byte) (AppendResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.fenceLocked(AnyEpoch); err != nil {
		return AppendResult{}, err
	}
	return p.appendAtLocked(records)
}

// appendAtLocked is AppendAt once the leadership was checked; the caller
// holds mu.
func (p *Partition) appendAtLocked(records []byte) (AppendResult, error) {
	headers, err := p.validateAt(records)
	if err != nil {
		return AppendResult{}, err
	}
	res := AppendResult{BaseOffset: headers[0].BaseOffset, LastOffset: headers[len(headers)-1].LastOffset(), LogAppendTime: -1}
	if p.log.LogEndOffset() == p.log.LogStartOffset() && headers[0].BaseOffset > p.log.LogEndOffset() {
		// Nothing is kept below the first batch: start the log there, as
		// the source's log starts there.
		if err := p.log.ResetTo(headers[0].BaseOffset); err != nil {
			return AppendResult{}, fmt.Errorf("%w: %v", ErrStorage, err)
		}
		if err := p.afterTruncateLocked(); err != nil {
			return AppendResult{}, err
		}
	}
	pos := 0
	for _, h := range headers {
		batch := records[pos : pos+h.Size()]
		pos += h.Size()
		// Not covered by the CRC, so the batch stays valid.
		record.SetPartitionLeaderEpoch(batch, p.leaderEpoch)
		if err := p.log.AppendReplicated(batch); err != nil {
			if errors.Is(err, log.ErrOffsetOrder) {
				return AppendResult{}, fmt.Errorf("%w: %s-%d: %v", ErrOffsetOutOfRange, p.Topic, p.Index, err)
			}
			if errors.Is(err, log.ErrBatchTooLarge) {
				return AppendResult{}, fmt.Errorf("%w: %v", ErrMessageTooLarge, err)
			}
			return AppendResult{}, fmt.Errorf("%w: %v", ErrStorage, err)
		}
		if err := replayBatch(p.producers, p.log, h, batch); err != nil {
			return AppendResult{}, fmt.Errorf("%w: %v", ErrStorage, err)
		}
	}
	p.snapDirty = true
	p.traffic.appended(records, headers)
	res.LogStartOffset = p.log.LogStartOffset()
	p.advanceHighWatermarkLocked(true)
	return res, nil
}

// validateAt checks the framing, format and order of batches for AppendAt.
func (p *Partition) validateAt(records []byte) ([]record.Header, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("%w: no record batch", ErrCorruptMessage)
	}
	var headers []record.Header
	next := p.log.LogEndOffset()
	it := record.Batches(records)
	for it.Next() {
		h, batch := it.Header(), it.Batch()
		switch {
		case h.NumRecords < 0 || h.LastOffsetDelta < 0:
			return nil, fmt.Errorf("%w: batch at offset %d: %d records, last offset delta %d",
				ErrCorruptMessage, h.BaseOffset, h.NumRecords, h.LastOffsetDelta)
		case record.Checksum(batch) != h.CRC:
			return nil, fmt.Errorf("%w: batch at offset %d: crc mismatch", ErrCorruptMessage, h.BaseOffset)
		case h.BaseOffset < next:
			return nil, fmt.Errorf("%w: %s-%d: batch at offset %d is below offset %d", ErrOffsetOutOfRange,
				p.Topic, p.Index, h.BaseOffset, next)
		}
		next = h.NextOffset()
		headers = append(headers, h)
	}
	if err := it.Err(); err != nil {
		if errors.Is(err, record.ErrUnsupportedMagic) {
			return nil, fmt.Errorf("%w: %v", ErrUnsupportedForMagic, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrCorruptMessage, err)
	}
	if it.Consumed() != len(records) {
		return nil, fmt.Errorf("%w: %d trailing bytes after the last batch", ErrCorruptMessage, len(records)-it.Consumed())
	}
	return headers, nil
}
