package log

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gregorbroker/gregor/core/record"
)

// Byte positions of v2 batch header fields, as Kafka lays them out.
const (
	batchPosLength          = 8
	batchPosEpoch           = 12
	batchPosMagic           = 16
	batchPosCRC             = 17
	batchPosAttributes      = 21
	batchPosLastOffsetDelta = 23
	batchPosFirstTimestamp  = 27
	batchPosMaxTimestamp    = 35
	batchPosProducerID      = 43
	batchPosProducerEpoch   = 51
	batchPosBaseSequence    = 53
	batchPosNumRecords      = 57
	batchLengthOverhead     = 12
)

// Attribute bits the cleaner reads or writes.
const (
	attrCodecMask = 0x07
	// attrDeleteHorizon marks a batch whose FirstTimestamp field holds the
	// delete horizon: the time after which its tombstones may be removed
	// (KIP-534). Record timestamps stay FirstTimestamp plus their deltas.
	attrDeleteHorizon = 0x40
)

// hasDeleteHorizon reports whether h carries a delete horizon.
func hasDeleteHorizon(h record.Header) bool { return h.Attributes&attrDeleteHorizon != 0 }

// keptRecord is a record the cleaner retains, with its slices copied out of
// the batch being filtered.
type keptRecord struct {
	offsetDelta int32
	timestamp   int64
	key, value  []byte
	headers     []record.RecordHeader
}

// keptBatch accumulates the retained records of one batch. Record bytes are
// copied into arena so they outlive the decoder's callback.
type keptBatch struct {
	recs  []keptRecord
	arena []byte
}

func (k *keptBatch) reset() {
	k.recs = k.recs[:0]
	k.arena = k.arena[:0]
}

// own copies b into the arena, keeping nil as nil.
func (k *keptBatch) own(b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(k.arena)
	k.arena = append(k.arena, b...)
	return k.arena[start:len(k.arena):len(k.arena)]
}

func (k *keptBatch) add(h record.Header, r record.Record) {
	kr := keptRecord{offsetDelta: r.OffsetDelta, timestamp: r.Timestamp(h), key: k.own(r.Key), value: k.own(r.Value)}
	if len(r.Headers) > 0 {
		kr.headers = make([]record.RecordHeader, len(r.Headers))
		for i, rh := range r.Headers {
			kr.headers[i] = record.RecordHeader{Key: rh.Key, Value: k.own(rh.Value)}
		}
	}
	k.recs = append(k.recs, kr)
}

// encodeRetained builds the batch that replaces h's batch with only the
// retained records, as Kafka's cleaner does: the same base offset and last
// offset delta (so the producer's last sequence survives), the records'
// own offset deltas and timestamps, and the same producer fields, leader
// epoch, attributes and codec. horizon >= 0 sets the delete horizon. With no
// records it writes Kafka's empty batch: the header alone, uncompressed.
func encodeRetained(dst []byte, h record.Header, recs []keptRecord, horizon int64) ([]byte, error) {
	start := len(dst)
	dst = append(dst, make([]byte, record.HeaderSize)...)
	attrs := uint16(h.Attributes) &^ attrDeleteHorizon
	firstTS, maxTS := h.MaxTimestamp, h.MaxTimestamp
	if len(recs) == 0 {
		attrs &^= attrCodecMask
	} else {
		firstTS = recs[0].timestamp
		if h.LogAppendTime() {
			firstTS = h.FirstTimestamp
		}
		if horizon >= 0 {
			attrs |= attrDeleteHorizon
			firstTS = horizon
		}
		var body []byte
		for _, r := range recs {
			body = appendKeptRecord(body, r, firstTS, h.LogAppendTime())
		}
		codec := record.Codec(attrs & attrCodecMask)
		var err error
		if dst, err = compressRecords(dst, codec, body); err != nil {
			return nil, fmt.Errorf("log: compact: batch at offset %d: %s: %w", h.BaseOffset, codec, err)
		}
	}
	b := dst[start:]
	if len(b)-batchLengthOverhead > math.MaxInt32 {
		return nil, fmt.Errorf("log: compact: batch at offset %d: rewritten batch of %d bytes is too large", h.BaseOffset, len(b))
	}
	be := binary.BigEndian
	be.PutUint64(b, uint64(h.BaseOffset))
	be.PutUint32(b[batchPosLength:], uint32(len(b)-batchLengthOverhead))
	be.PutUint32(b[batchPosEpoch:], uint32(h.PartitionLeaderEpoch))
	b[batchPosMagic] = 2
	be.PutUint16(b[batchPosAttributes:], attrs)
	be.PutUint32(b[batchPosLastOffsetDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(b[batchPosFirstTimestamp:], uint64(firstTS))
	be.PutUint64(b[batchPosMaxTimestamp:], uint64(maxTS))
	be.PutUint64(b[batchPosProducerID:], uint64(h.ProducerID))
	be.PutUint16(b[batchPosProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(b[batchPosBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(b[batchPosNumRecords:], uint32(len(recs)))
	be.PutUint32(b[batchPosCRC:], record.Checksum(b))
	return dst, nil
}

// appendKeptRecord appends one record in v2 form: a varint length, then
// attributes, timestamp delta against firstTS, offset delta, key, value and
// headers. LogAppendTime batches keep delta 0, as Kafka writes them.
func appendKeptRecord(b []byte, r keptRecord, firstTS int64, logAppendTime bool) []byte {
	tsDelta := r.timestamp - firstTS
	if logAppendTime {
		tsDelta = 0
	}
	n := 1 + varlongLen(tsDelta) + varlongLen(int64(r.offsetDelta)) + bytesLen(r.key) + bytesLen(r.value) + varlongLen(int64(len(r.headers)))
	for _, rh := range r.headers {
		n += varlongLen(int64(len(rh.Key))) + len(rh.Key) + bytesLen(rh.Value)
	}
	b = binary.AppendVarint(b, int64(n))
	b = append(b, 0)
	b = binary.AppendVarint(b, tsDelta)
	b = binary.AppendVarint(b, int64(r.offsetDelta))
	b = appendVarBytes(b, r.key)
	b = appendVarBytes(b, r.value)
	b = binary.AppendVarint(b, int64(len(r.headers)))
	for _, rh := range r.headers {
		b = binary.AppendVarint(b, int64(len(rh.Key)))
		b = append(b, rh.Key...)
		b = appendVarBytes(b, rh.Value)
	}
	return b
}

func varlongLen(v int64) int {
	var tmp [binary.MaxVarintLen64]byte
	return binary.PutVarint(tmp[:], v)
}

func bytesLen(v []byte) int {
	if v == nil {
		return varlongLen(-1)
	}
	return varlongLen(int64(len(v))) + len(v)
}

func appendVarBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	b = binary.AppendVarint(b, int64(len(v)))
	return append(b, v...)
}

// compressRecords appends the records section body compressed with c, as
// the Java client writes it, so every client reads a rewritten batch like
// the one it replaced.
func compressRecords(dst []byte, c record.Codec, body []byte) ([]byte, error) {
	out, err := record.Compress(dst, c, body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return out, nil
}
