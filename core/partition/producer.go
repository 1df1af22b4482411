package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/gregorbroker/gregor/core/record"
)

// maxBatchesPerProducer is how many recent batches per producer are kept for
// duplicate detection; Kafka clients keep at most five in flight.
const maxBatchesPerProducer = 5

// batchMeta is what a partition remembers of one idempotent batch.
type batchMeta struct {
	firstSeq, lastSeq       int32
	firstOffset, lastOffset int64
	timestamp               int64
}

// producerEntry is the state of one producer id on one partition.
type producerEntry struct {
	epoch            int16
	batches          []batchMeta // oldest first, at most maxBatchesPerProducer
	coordinatorEpoch int32
	// currentTxnFirstOffset is the first offset of the open transaction, or -1.
	currentTxnFirstOffset int64
	// lastTimestamp is the largest timestamp of the producer's batches and
	// markers, or -1: producer.id.expiration.ms counts from it.
	lastTimestamp int64
	// fromZero: the epoch began here without a batch (a transaction
	// version 2 marker bumped it), so its first batch must start at
	// sequence 0, as Kafka's entry whose last sequence is NO_SEQUENCE.
	fromZero bool
}

func (e *producerEntry) last() (batchMeta, bool) {
	if len(e.batches) == 0 {
		return batchMeta{}, false
	}
	return e.batches[len(e.batches)-1], true
}

// producerState holds every producer's entry for a partition. It is guarded by
// the owning Partition's mutex.
type producerState struct {
	producers map[int64]*producerEntry
	// ongoing maps the producers with an open transaction to its first
	// offset; its smallest value bounds the last stable offset.
	ongoing map[int64]int64
}

func newProducerState() *producerState {
	return &producerState{producers: map[int64]*producerEntry{}, ongoing: map[int64]int64{}}
}

// firstUnstable is the first offset of the oldest open transaction, or -1.
func (s *producerState) firstUnstable() int64 {
	first := int64(-1)
	for _, off := range s.ongoing {
		if first < 0 || off < first {
			first = off
		}
	}
	return first
}

func inSequence(lastSeq, nextSeq int32) bool {
	return nextSeq == lastSeq+1 || (lastSeq == math.MaxInt32 && nextSeq == 0)
}

// appendOrigin is who wrote a batch, as Kafka's AppendOrigin: a client's
// idempotent batches carry sequences that are checked; a coordinator's
// (the group coordinator's TxnOffsetCommit batches) carry none, and only
// their producer epoch is checked.
type appendOrigin int8

const (
	originClient appendOrigin = iota
	originCoordinator
)

// check validates an idempotent batch against the producer's state. A batch
// that repeats one of the last five is returned as a duplicate, and its
// original offsets are the answer.
func (s *producerState) check(h record.Header, origin appendOrigin) (dup *batchMeta, err error) {
	if h.ProducerID < 0 {
		return nil, nil
	}
	if origin == originClient && h.BaseSequence < 0 {
		return nil, fmt.Errorf("%w: invalid sequence number %d in a batch of producer %d", ErrInvalidRecord,
			h.BaseSequence, h.ProducerID)
	}
	e, ok := s.producers[h.ProducerID]
	if !ok {
		// An unknown producer (new, or whose state was removed with its
		// data) may start at any sequence, as in Kafka.
		return nil, nil
	}
	if h.ProducerEpoch < e.epoch {
		return nil, fmt.Errorf("%w: producer %d epoch %d is older than %d", ErrInvalidProducerEpoch,
			h.ProducerID, h.ProducerEpoch, e.epoch)
	}
	if origin == originCoordinator {
		// A new producer epoch (InitProducerId of a restarted or
		// successor producer, or a KIP-890 bump) carries no sequence to
		// start at 0: only the epoch fences a coordinator's write.
		return nil, nil
	}
	if !h.IsTransactional() && e.currentTxnFirstOffset >= 0 {
		return nil, fmt.Errorf("%w: producer %d wrote a non-transactional batch inside its open transaction",
			ErrInvalidTxnState, h.ProducerID)
	}
	if h.ProducerEpoch == e.epoch {
		for i := range e.batches {
			b := e.batches[i]
			if b.firstSeq == h.BaseSequence && b.lastSeq == h.LastSequence() {
				return &b, nil
			}
		}
	}
	if h.ProducerEpoch > e.epoch {
		if h.BaseSequence != 0 {
			return nil, fmt.Errorf("%w: producer %d new epoch %d must start at sequence 0, got %d",
				ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
		return nil, nil
	}
	last, ok := e.last()
	if !ok {
		if e.fromZero && h.BaseSequence != 0 {
			return nil, fmt.Errorf("%w: producer %d epoch %d must start at sequence 0, got %d",
				ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
		return nil, nil
	}
	if !inSequence(last.lastSeq, h.BaseSequence) {
		return nil, fmt.Errorf("%w: producer %d epoch %d expected sequence %d, got %d", ErrOutOfOrderSequence,
			h.ProducerID, h.ProducerEpoch, last.lastSeq+1, h.BaseSequence)
	}
	return nil, nil
}

// update records an appended batch (h carries its assigned offsets).
func (s *producerState) update(h record.Header) {
	if h.ProducerID < 0 {
		return
	}
	e, ok := s.producers[h.ProducerID]
	if !ok {
		e = &producerEntry{epoch: h.ProducerEpoch, coordinatorEpoch: -1, currentTxnFirstOffset: -1, lastTimestamp: -1,
			fromZero: h.IsControl()}
		s.producers[h.ProducerID] = e
	}
	e.lastTimestamp = max(e.lastTimestamp, h.MaxTimestamp)
	if h.ProducerEpoch != e.epoch {
		e.epoch = h.ProducerEpoch
		e.batches = e.batches[:0]
		e.fromZero = true
	}
	if h.IsControl() {
		e.currentTxnFirstOffset = -1
		delete(s.ongoing, h.ProducerID)
		return
	}
	if h.IsTransactional() && e.currentTxnFirstOffset < 0 {
		e.currentTxnFirstOffset = h.BaseOffset
		s.ongoing[h.ProducerID] = h.BaseOffset
	}
	if h.BaseSequence < 0 {
		return
	}
	e.fromZero = false
	if len(e.batches) == maxBatchesPerProducer {
		copy(e.batches, e.batches[1:])
		e.batches = e.batches[:maxBatchesPerProducer-1]
	}
	e.batches = append(e.batches, batchMeta{
		firstSeq: h.BaseSequence, lastSeq: h.LastSequence(),
		firstOffset: h.BaseOffset, lastOffset: h.LastOffset(),
		timestamp: h.MaxTimestamp,
	})
}

// truncate forgets batches at or above offset (after a log truncation).
func (s *producerState) removeAbove(offset int64) {
	for id, e := range s.producers {
		kept := e.batches[:0]
		for _, b := range e.batches {
			if b.lastOffset < offset {
				kept = append(kept, b)
			}
		}
		if len(kept) < len(e.batches) {
			// What came before the removed batches is not known here.
			e.fromZero = false
		}
		e.batches = kept
		if e.currentTxnFirstOffset >= offset {
			e.currentTxnFirstOffset = -1
			delete(s.ongoing, id)
		}
		if len(e.batches) == 0 && e.currentTxnFirstOffset < 0 {
			delete(s.producers, id)
		}
	}
}

// The snapshot file is Kafka's producer snapshot, version 1:
//
//	version int16 | crc uint32 (CRC-32C of the rest) | count int32 |
//	count × { producer_id int64, epoch int16, last_sequence int32, last_offset int64,
//	          offset_delta int32, timestamp int64, coordinator_epoch int32,
//	          current_txn_first_offset int64 }
const (
	snapshotVersion   = 1
	snapshotEntrySize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
	snapshotHeader    = 2 + 4 + 4
)

var errSnapshotCorrupt = errors.New("partition: producer snapshot corrupt")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *producerState) marshal() []byte {
	b := make([]byte, snapshotHeader, snapshotHeader+len(s.producers)*snapshotEntrySize)
	binary.BigEndian.PutUint16(b[0:], snapshotVersion)
	binary.BigEndian.PutUint32(b[6:], uint32(len(s.producers)))
	for id, e := range s.producers {
		last, ok := e.last()
		if !ok {
			last = batchMeta{firstSeq: -1, lastSeq: -1, firstOffset: -1, lastOffset: -1, timestamp: -1}
		}
		b = binary.BigEndian.AppendUint64(b, uint64(id))
		b = binary.BigEndian.AppendUint16(b, uint16(e.epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(last.lastSeq))
		b = binary.BigEndian.AppendUint64(b, uint64(last.lastOffset))
		b = binary.BigEndian.AppendUint32(b, uint32(last.lastOffset-last.firstOffset))
		b = binary.BigEndian.AppendUint64(b, uint64(max(last.timestamp, e.lastTimestamp)))
		b = binary.BigEndian.AppendUint32(b, uint32(e.coordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.currentTxnFirstOffset))
	}
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], castagnoli))
	return b
}

func unmarshalProducerState(b []byte) (*producerState, error) {
	if len(b) < snapshotHeader {
		return nil, fmt.Errorf("%w: %d bytes", errSnapshotCorrupt, len(b))
	}
	if v := binary.BigEndian.Uint16(b); v != snapshotVersion {
		return nil, fmt.Errorf("%w: version %d", errSnapshotCorrupt, v)
	}
	if crc32.Checksum(b[6:], castagnoli) != binary.BigEndian.Uint32(b[2:]) {
		return nil, fmt.Errorf("%w: crc mismatch", errSnapshotCorrupt)
	}
	n := int(int32(binary.BigEndian.Uint32(b[6:])))
	if n < 0 || n != (len(b)-snapshotHeader)/snapshotEntrySize || (len(b)-snapshotHeader)%snapshotEntrySize != 0 {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", errSnapshotCorrupt, n, len(b))
	}
	s := newProducerState()
	p := b[snapshotHeader:]
	for i := 0; i < n; i++ {
		e := p[i*snapshotEntrySize:]
		id := int64(binary.BigEndian.Uint64(e[0:]))
		epoch := int16(binary.BigEndian.Uint16(e[8:]))
		lastSeq := int32(binary.BigEndian.Uint32(e[10:]))
		lastOff := int64(binary.BigEndian.Uint64(e[14:]))
		delta := int32(binary.BigEndian.Uint32(e[22:]))
		ts := int64(binary.BigEndian.Uint64(e[26:]))
		entry := &producerEntry{
			epoch:                 epoch,
			coordinatorEpoch:      int32(binary.BigEndian.Uint32(e[34:])),
			currentTxnFirstOffset: int64(binary.BigEndian.Uint64(e[38:])),
			lastTimestamp:         ts,
			fromZero:              lastSeq < 0,
		}
		if entry.currentTxnFirstOffset >= 0 {
			s.ongoing[id] = entry.currentTxnFirstOffset
		}
		if lastSeq >= 0 && lastOff >= 0 {
			entry.batches = []batchMeta{{
				firstSeq: lastSeq - delta, lastSeq: lastSeq,
				firstOffset: lastOff - int64(delta), lastOffset: lastOff, timestamp: ts,
			}}
		}
		s.producers[id] = entry
	}
	return s, nil
}
