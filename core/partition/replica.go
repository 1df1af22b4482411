package partition

import (
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/record"
)

// FollowerAppend is the result of AppendAsFollower.
type FollowerAppend struct {
	// Batches and Bytes are what was appended; a partial batch at the end
	// of a fetch response is left for the next fetch.
	Batches int
	Bytes   int
	// LogEndOffset is the log end after the append.
	LogEndOffset int64
}

// AppendAsFollower appends batches fetched from the partition's leader as
// they are: the leader's offsets, leader epochs and timestamps stay. Each
// batch is checked for framing and CRC only, since compacted batches carry
// offset gaps that the produce validation refuses. A batch at or past the
// log end offset is required; anything else means the follower must
// truncate first (log.ErrOffsetOrder). A partial trailing batch, which a
// size-bounded fetch may return, is ignored.
func (p *Partition) AppendAsFollower(batches []byte) (FollowerAppend, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return FollowerAppend{}, ErrClosed
	}
	if p.isLocal(p.leader) {
		// A fetch sent while this broker followed can answer after it was
		// elected: the old leader's tail would land above the new epoch's
		// start, stamped with the old epoch, and every follower would loop
		// truncating to the epoch's end and fetching that tail back.
		return FollowerAppend{}, fmt.Errorf("%w: %s-%d: this broker leads epoch %d; replicated batches refused",
			ErrNotFollower, p.Topic, p.Index, p.leaderEpoch)
	}
	var res FollowerAppend
	it := record.Batches(batches)
	for it.Next() {
		h, batch := it.Header(), it.Batch()
		if crc := record.Checksum(batch); crc != h.CRC {
			return p.followerAppendedLocked(res), fmt.Errorf("%w: replicated batch at offset %d: crc mismatch: stored %08x, computed %08x",
				ErrCorruptMessage, h.BaseOffset, h.CRC, crc)
		}
		if h.NumRecords < 0 || h.LastOffsetDelta < 0 {
			return p.followerAppendedLocked(res), fmt.Errorf("%w: replicated batch at offset %d: %d records, last offset delta %d",
				ErrCorruptMessage, h.BaseOffset, h.NumRecords, h.LastOffsetDelta)
		}
		if err := p.log.AppendReplicated(batch); err != nil {
			if errors.Is(err, log.ErrCorrupt) || errors.Is(err, log.ErrOffsetOrder) {
				return p.followerAppendedLocked(res), fmt.Errorf("partition: %s-%d: %w", p.Topic, p.Index, err)
			}
			return p.followerAppendedLocked(res), fmt.Errorf("%w: %v", ErrStorage, err)
		}
		if err := replayBatch(p.producers, p.log, h, batch); err != nil {
			return p.followerAppendedLocked(res), fmt.Errorf("%w: %v", ErrStorage, err)
		}
		res.Batches++
		res.Bytes += len(batch)
	}
	if err := it.Err(); err != nil && !errors.Is(err, record.ErrTruncated) {
		return p.followerAppendedLocked(res), fmt.Errorf("%w: replicated batches: %v", ErrCorruptMessage, err)
	}
	return p.followerAppendedLocked(res), nil
}

func (p *Partition) followerAppendedLocked(res FollowerAppend) FollowerAppend {
	if res.Batches > 0 {
		p.snapDirty = true
		p.notifyLocked()
	}
	res.LogEndOffset = p.log.LogEndOffset()
	return res
}

// SetFollowerHighWatermark raises a follower's high watermark to the
// leader's, bounded by the local log end offset. It never lowers it; only
// truncation does.
func (p *Partition) SetFollowerHighWatermark(leaderHW int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hw := min(leaderHW, p.log.LogEndOffset())
	if hw > p.hw {
		p.setHighWatermarkLocked(hw)
		p.notifyLocked()
	}
}

// TruncateTo removes every batch at or after offset, for a follower whose log
// diverged from its leader's, and rebuilds the producer state from what
// remains. The high watermark follows the log end down.
func (p *Partition) TruncateTo(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	if offset >= p.log.LogEndOffset() {
		return nil
	}
	if err := p.log.Truncate(offset); err != nil {
		return fmt.Errorf("%w: %v", ErrStorage, err)
	}
	return p.afterTruncateLocked()
}

// ResetTo empties the partition and starts it at offset, for a follower
// whose log ends before its leader's log start offset.
func (p *Partition) ResetTo(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	if err := p.log.ResetTo(offset); err != nil {
		return fmt.Errorf("%w: %v", ErrStorage, err)
	}
	return p.afterTruncateLocked()
}

func (p *Partition) afterTruncateLocked() error {
	if err := p.loadProducerState(); err != nil {
		return err
	}
	leo := p.log.LogEndOffset()
	// The high watermark follows the log end down, and up to a log start
	// that a reset moved past it.
	p.setHighWatermarkLocked(max(min(p.hw, leo), p.log.LogStartOffset()))
	p.epochStart = min(p.epochStart, leo)
	p.notifyLocked()
	return nil
}

// FetchPosition is where a follower fetches from: its log end offset and the
// epoch of its last batch (-1 when it has none).
func (p *Partition) FetchPosition() (offset int64, lastEpoch int32) {
	lastEpoch = -1
	if e, ok := p.log.LatestEpoch(); ok {
		lastEpoch = e
	}
	return p.log.LogEndOffset(), lastEpoch
}

// replayBatch applies one batch already in the log to a producer state, and
// indexes an aborted transaction when the batch is an ABORT marker.
func replayBatch(state *producerState, l *log.Log, h record.Header, batch []byte) error {
	first := int64(-1)
	if e, ok := state.producers[h.ProducerID]; ok {
		first = e.currentTxnFirstOffset
	}
	state.update(h)
	if !h.IsControl() || h.ProducerID < 0 {
		return nil
	}
	typ, ok := ControlType(batch)
	if !ok || typ != ControlAbort {
		return nil
	}
	if first < 0 {
		first = h.BaseOffset
	}
	lso := h.BaseOffset + 1
	if fu := state.firstUnstable(); fu >= 0 && fu < lso {
		lso = fu
	}
	return l.AppendAbortedTxn(log.AbortedTxn{ProducerID: h.ProducerID, FirstOffset: first,
		LastOffset: h.BaseOffset, LastStableOffset: lso})
}
