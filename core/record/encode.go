package record

import (
	"encoding/binary"
	"fmt"
	"math"
)

// BatchSpec describes the header of a batch to Encode.
type BatchSpec struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Codec                Codec
	Transactional        bool
	Control              bool
	LogAppendTime        bool
	FirstTimestamp       int64
	// MaxTimestamp of 0 is computed as FirstTimestamp plus the largest
	// record timestamp delta.
	MaxTimestamp  int64
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	// KeepOffsetDeltas encodes each record with its own OffsetDelta and
	// the header with LastOffsetDelta, for a batch some of whose records
	// were taken out (the gaps stay, as compaction leaves them); it allows
	// a batch of no records, which still covers its offsets.
	KeepOffsetDeltas bool
	LastOffsetDelta  int32
}

// Encode builds one v2 batch holding records, compressed with spec.Codec. The
// records' OffsetDelta fields are ignored: record i gets offset delta i. The
// result passes Validate and Records returns the records back. With
// spec.KeepOffsetDeltas the records keep their deltas, which must increase
// and not pass spec.LastOffsetDelta.
func Encode(spec BatchSpec, records []Record) ([]byte, error) {
	delta := func(i int) int32 { return int32(i) }
	lastDelta := int32(len(records) - 1)
	if spec.KeepOffsetDeltas {
		delta = func(i int) int32 { return records[i].OffsetDelta }
		lastDelta = spec.LastOffsetDelta
		prev := int32(-1)
		for i, r := range records {
			if r.OffsetDelta <= prev || r.OffsetDelta > lastDelta {
				return nil, fmt.Errorf("record: encode: record %d has offset delta %d after %d (last %d)", i, r.OffsetDelta, prev, lastDelta)
			}
			prev = r.OffsetDelta
		}
		if len(records) == 0 {
			spec.Codec = CodecNone // nothing to compress
		}
	} else if len(records) == 0 {
		return nil, fmt.Errorf("record: encode: a batch needs at least one record")
	}
	if spec.Codec < CodecNone || spec.Codec > CodecZstd {
		return nil, fmt.Errorf("record: encode: unknown compression codec %d", int8(spec.Codec))
	}
	size := HeaderSize
	maxDelta := int64(math.MinInt64)
	for i, r := range records {
		n, err := recordSize(delta(i), r)
		if err != nil {
			return nil, fmt.Errorf("record: encode: record %d: %w", i, err)
		}
		size += varintSize(int64(n)) + n
		maxDelta = max(maxDelta, r.TimestampDelta)
	}
	b := make([]byte, HeaderSize, size)
	for i, r := range records {
		b = appendRecord(b, delta(i), r)
	}
	if spec.Codec != CodecNone {
		body, err := compress(make([]byte, HeaderSize, HeaderSize+len(b)/2+64), spec.Codec, b[HeaderSize:])
		if err != nil {
			return nil, fmt.Errorf("record: encode: %s: %w", spec.Codec, err)
		}
		b = body
	}
	if len(b)-lengthOverhead > math.MaxInt32 {
		return nil, fmt.Errorf("record: encode: batch of %d bytes is too large", len(b))
	}

	var attrs uint16 = uint16(spec.Codec)
	if spec.LogAppendTime {
		attrs |= attrLogAppendTime
	}
	if spec.Transactional {
		attrs |= attrTransactional
	}
	if spec.Control {
		attrs |= attrControl
	}
	maxTS := spec.MaxTimestamp
	if maxTS == 0 && len(records) > 0 {
		maxTS = spec.FirstTimestamp + maxDelta
	}
	binary.BigEndian.PutUint64(b[posBaseOffset:], uint64(spec.BaseOffset))
	binary.BigEndian.PutUint32(b[posLength:], uint32(len(b)-lengthOverhead))
	binary.BigEndian.PutUint32(b[posPartitionLeaderEpoch:], uint32(spec.PartitionLeaderEpoch))
	b[posMagic] = currentMagic
	binary.BigEndian.PutUint16(b[posAttributes:], attrs)
	binary.BigEndian.PutUint32(b[posLastOffsetDelta:], uint32(lastDelta))
	binary.BigEndian.PutUint64(b[posFirstTimestamp:], uint64(spec.FirstTimestamp))
	binary.BigEndian.PutUint64(b[posMaxTimestamp:], uint64(maxTS))
	binary.BigEndian.PutUint64(b[posProducerID:], uint64(spec.ProducerID))
	binary.BigEndian.PutUint16(b[posProducerEpoch:], uint16(spec.ProducerEpoch))
	binary.BigEndian.PutUint32(b[posBaseSequence:], uint32(spec.BaseSequence))
	binary.BigEndian.PutUint32(b[posNumRecords:], uint32(len(records)))
	binary.BigEndian.PutUint32(b[posCRC:], Checksum(b))
	return b, nil
}

// recordSize is the encoded size of r's body, excluding its length prefix.
func recordSize(offsetDelta int32, r Record) (int, error) {
	n := 1 + varintSize(r.TimestampDelta) + varintSize(int64(offsetDelta))
	n += bytesSize(r.Key) + bytesSize(r.Value)
	n += varintSize(int64(len(r.Headers)))
	for _, h := range r.Headers {
		n += varintSize(int64(len(h.Key))) + len(h.Key) + bytesSize(h.Value)
	}
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("record of %d bytes is too large", n)
	}
	return n, nil
}

func bytesSize(b []byte) int {
	if b == nil {
		return 1
	}
	return varintSize(int64(len(b))) + len(b)
}

func appendRecord(b []byte, offsetDelta int32, r Record) []byte {
	n, _ := recordSize(offsetDelta, r)
	b = appendVarint(b, int32(n))
	b = append(b, 0) // attributes
	b = appendVarlong(b, r.TimestampDelta)
	b = appendVarint(b, offsetDelta)
	b = appendBytes(b, r.Key)
	b = appendBytes(b, r.Value)
	b = appendVarint(b, int32(len(r.Headers)))
	for _, h := range r.Headers {
		b = appendVarint(b, int32(len(h.Key)))
		b = append(b, h.Key...)
		b = appendBytes(b, h.Value)
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	if v == nil {
		return appendVarint(b, -1)
	}
	b = appendVarint(b, int32(len(v)))
	return append(b, v...)
}
