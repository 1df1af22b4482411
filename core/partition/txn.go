package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/record"
)

// Control record types, the second int16 of a control record's key.
const (
	ControlAbort  int16 = 0
	ControlCommit int16 = 1
)

// TxnMarker is a transaction marker the transaction coordinator writes to a
// partition a transaction touched.
type TxnMarker struct {
	ProducerID    int64
	ProducerEpoch int16
	Commit        bool
	// CoordinatorEpoch is the leader epoch of the coordinator's
	// __transaction_state partition; an older one than the partition has
	// seen for the producer is fenced.
	CoordinatorEpoch int32
}

// EncodeControlBatch builds the control batch of a marker: one record whose
// key is version 0 and the control type, and whose value is version 0 and
// the coordinator epoch, as Kafka writes them.
func EncodeControlBatch(m TxnMarker, timestamp int64) ([]byte, error) {
	typ := ControlAbort
	if m.Commit {
		typ = ControlCommit
	}
	key := binary.BigEndian.AppendUint16(make([]byte, 2, 4), uint16(typ))
	value := binary.BigEndian.AppendUint32(make([]byte, 2, 6), uint32(m.CoordinatorEpoch))
	return record.Encode(record.BatchSpec{
		Control: true, Transactional: true, FirstTimestamp: timestamp, MaxTimestamp: timestamp,
		ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, BaseSequence: -1,
	}, []record.Record{{Key: key, Value: value}})
}

// ControlType reads the control type of a control batch's first record;
// ok is false when the batch holds no readable control record.
func ControlType(batch []byte) (typ int16, ok bool) {
	err := record.Records(batch, 1<<20, func(r record.Record) error {
		if len(r.Key) >= 4 {
			typ, ok = int16(binary.BigEndian.Uint16(r.Key[2:])), true
		}
		return errStopRecords
	})
	if err != nil && !errors.Is(err, errStopRecords) {
		return 0, false
	}
	return typ, ok
}

var errStopRecords = errors.New("partition: stop")

// WriteTxnMarker appends a COMMIT or ABORT marker for a producer and closes
// its open transaction here; an abort is recorded in the aborted-transaction
// index. It returns the marker's offset. A marker from an older producer
// epoch or an older coordinator epoch than the partition knows is refused.
func (p *Partition) WriteTxnMarker(m TxnMarker) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.fenceLocked(AnyEpoch); err != nil {
		return -1, err
	}
	return p.writeTxnMarkerLocked(m)
}

// writeTxnMarkerLocked is WriteTxnMarker once the leadership was checked;
// the caller holds mu.
func (p *Partition) writeTxnMarkerLocked(m TxnMarker) (int64, error) {
	first := int64(-1)
	if e, ok := p.producers.producers[m.ProducerID]; ok {
		if m.ProducerEpoch < e.epoch {
			return -1, fmt.Errorf("%w: marker for producer %d at epoch %d, the partition has epoch %d",
				ErrInvalidProducerEpoch, m.ProducerID, m.ProducerEpoch, e.epoch)
		}
		if m.CoordinatorEpoch < e.coordinatorEpoch {
			return -1, fmt.Errorf("%w: coordinator epoch %d is older than %d", ErrCoordinatorFenced,
				m.CoordinatorEpoch, e.coordinatorEpoch)
		}
		first = e.currentTxnFirstOffset
	}
	batch, err := EncodeControlBatch(m, p.now().UnixMilli())
	if err != nil {
		return -1, fmt.Errorf("partition: %s-%d: %w", p.Topic, p.Index, err)
	}
	record.SetPartitionLeaderEpoch(batch, p.leaderEpoch)
	off, err := p.log.Append(batch)
	if err != nil {
		return -1, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	h, err := record.ParseHeader(batch)
	if err != nil {
		return -1, fmt.Errorf("partition: %s-%d: %w", p.Topic, p.Index, err)
	}
	p.producers.update(h)
	e := p.producers.producers[m.ProducerID]
	e.coordinatorEpoch = m.CoordinatorEpoch
	p.snapDirty = true
	if !m.Commit {
		if err := p.indexAbortLocked(m.ProducerID, first, off); err != nil {
			return -1, err
		}
	}
	p.advanceHighWatermarkLocked(true)
	return off, nil
}

// indexAbortLocked records an aborted transaction whose marker is at
// marker; first is its first offset, or -1 when nothing of it is here.
func (p *Partition) indexAbortLocked(producerID, first, marker int64) error {
	if first < 0 {
		first = marker
	}
	lso := marker + 1
	if fu := p.producers.firstUnstable(); fu >= 0 && fu < lso {
		lso = fu
	}
	err := p.log.AppendAbortedTxn(log.AbortedTxn{ProducerID: producerID, FirstOffset: first, LastOffset: marker, LastStableOffset: lso})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStorage, err)
	}
	return nil
}

// lastStableLocked is the last stable offset: the high watermark, or the
// first offset of the oldest open transaction when that is lower.
func (p *Partition) lastStableLocked() int64 {
	if fu := p.producers.firstUnstable(); fu >= 0 && fu < p.hw {
		return fu
	}
	return p.hw
}

// ReadCommitted is Read for an isolation_level=read_committed fetch: whole
// batches up to the last stable offset, and the aborted transactions that
// overlap them.
func (p *Partition) ReadCommitted(offset int64, maxBytes int, minOneBatch bool) (ReadResult, error) {
	off := p.Offsets()
	res := ReadResult{Offsets: off}
	if err := p.Offline(); err != nil {
		return res, err
	}
	if offset < off.LogStartOffset || offset > off.LogEndOffset {
		return res, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, off.LogStartOffset, off.LogEndOffset)
	}
	if offset >= off.LastStableOffset {
		return res, nil
	}
	b, err := p.log.Read(offset, maxBytes, off.LastStableOffset, minOneBatch)
	if err != nil {
		if errors.Is(err, log.ErrOffsetOutOfRange) {
			return res, fmt.Errorf("%w: %v", ErrOffsetOutOfRange, err)
		}
		return res, fmt.Errorf("%w: %v", ErrStorage, err)
	}
	res.Records = b
	p.traffic.bytesOut.Add(int64(len(b)))
	if len(b) > 0 {
		upTo := off.LastStableOffset
		for it := record.Batches(b); it.Next(); {
			upTo = it.Header().NextOffset()
		}
		res.Aborted = p.log.AbortedTxns(offset, upTo)
	}
	return res, nil
}

// ProducerInfo describes a producer's state on this partition
// (DescribeProducers).
type ProducerInfo struct {
	ProducerID       int64
	ProducerEpoch    int16
	LastSequence     int32 // -1 when unknown
	LastTimestamp    int64 // -1 when unknown
	CoordinatorEpoch int32
	// CurrentTxnStartOffset is the first offset of the open transaction,
	// or -1.
	CurrentTxnStartOffset int64
}

// Producers lists the producers the partition keeps state for, by id.
func (p *Partition) Producers() []ProducerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ProducerInfo, 0, len(p.producers.producers))
	for id, e := range p.producers.producers {
		pi := ProducerInfo{ProducerID: id, ProducerEpoch: e.epoch, LastSequence: -1, LastTimestamp: -1,
			CoordinatorEpoch: e.coordinatorEpoch, CurrentTxnStartOffset: e.currentTxnFirstOffset}
		if b, ok := e.last(); ok {
			pi.LastSequence, pi.LastTimestamp = b.lastSeq, b.timestamp
		}
		out = append(out, pi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}

// OpenTxn reports whether a producer has a transaction open here in the
// given producer epoch, as Kafka's hasOngoingTransaction: a batch of a newer
// epoch (a transaction version 2 producer after EndTxn, or a re-initialised
// one) belongs to another transaction even while an older one is still open
// here because its marker is not written yet, so it must be verified with
// the coordinator, which holds it back until the older one is completed.
func (p *Partition) OpenTxn(producerID int64, epoch int16) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.producers.ongoing[producerID]; !ok {
		return false
	}
	e, ok := p.producers.producers[producerID]
	return ok && e.epoch == epoch
}
