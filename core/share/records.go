package share

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// StateTopic is the internal topic share-partition state is written to.
const StateTopic = "__share_group_state"

// ErrCorruptRecord is a __share_group_state record that cannot be decoded.
var ErrCorruptRecord = errors.New("share: corrupt share state record")

// Record types of __share_group_state keys, Kafka's numbering.
const (
	recordShareSnapshot int16 = 0
)

// EncodeSnapshotKey is Kafka's ShareSnapshotKey: the record type (0), then
// the group id, topic id and partition.
func EncodeSnapshotKey(k PartitionKey) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(recordShareSnapshot))
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.Group)))
	b = append(b, k.Group...)
	b = append(b, k.TopicID[:]...)
	return binary.BigEndian.AppendUint32(b, uint32(k.Partition))
}

// DecodeSnapshotKey reads a ShareSnapshotKey; ok is false for a key of
// another record type.
func DecodeSnapshotKey(b []byte) (k PartitionKey, ok bool, err error) {
	if len(b) < 2 {
		return k, false, fmt.Errorf("%w: key of %d bytes", ErrCorruptRecord, len(b))
	}
	if int16(binary.BigEndian.Uint16(b)) != recordShareSnapshot {
		return k, false, nil
	}
	b = b[2:]
	if len(b) < 2 {
		return k, false, fmt.Errorf("%w: truncated group id", ErrCorruptRecord)
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if len(b) != n+16+4 {
		return k, false, fmt.Errorf("%w: key of %d bytes after a %d-byte group id", ErrCorruptRecord, len(b), n)
	}
	k.Group = string(b[:n])
	copy(k.TopicID[:], b[n:n+16])
	k.Partition = int32(binary.BigEndian.Uint32(b[n+16:]))
	return k, true, nil
}

// SnapshotMeta are the epochs and times a ShareSnapshotValue carries
// beside the state.
type SnapshotMeta struct {
	SnapshotEpoch   int32
	StateEpoch      int32
	LeaderEpoch     int32
	CreateTimestamp int64
	WriteTimestamp  int64
}

// EncodeSnapshotValue is Kafka's ShareSnapshotValue version 0 in its
// flexible encoding: the epochs, the start offset, the timestamps and the
// state batches (first offset, last offset, delivery state, delivery
// count), with empty tagged fields.
func EncodeSnapshotValue(m SnapshotMeta, s Snapshot) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(m.SnapshotEpoch))
	b = binary.BigEndian.AppendUint32(b, uint32(m.StateEpoch))
	b = binary.BigEndian.AppendUint32(b, uint32(m.LeaderEpoch))
	b = binary.BigEndian.AppendUint64(b, uint64(s.StartOffset))
	b = binary.BigEndian.AppendUint64(b, uint64(m.CreateTimestamp))
	b = binary.BigEndian.AppendUint64(b, uint64(m.WriteTimestamp))
	b = binary.AppendUvarint(b, uint64(len(s.Batches)+1))
	for _, sb := range s.Batches {
		b = binary.BigEndian.AppendUint64(b, uint64(sb.FirstOffset))
		b = binary.BigEndian.AppendUint64(b, uint64(sb.LastOffset))
		b = append(b, byte(sb.State))
		b = binary.BigEndian.AppendUint16(b, uint16(sb.DeliveryCount))
		b = append(b, 0) // tagged fields
	}
	return append(b, 0) // tagged fields
}

// DecodeSnapshotValue reads a ShareSnapshotValue.
func DecodeSnapshotValue(b []byte) (SnapshotMeta, Snapshot, error) {
	var m SnapshotMeta
	var s Snapshot
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrCorruptRecord, what) }
	if len(b) < 2+4*3+8*3 {
		return m, s, bad(fmt.Sprintf("value of %d bytes", len(b)))
	}
	if v := binary.BigEndian.Uint16(b); v != 0 {
		return m, s, bad(fmt.Sprintf("value version %d", v))
	}
	b = b[2:]
	m.SnapshotEpoch = int32(binary.BigEndian.Uint32(b))
	m.StateEpoch = int32(binary.BigEndian.Uint32(b[4:]))
	m.LeaderEpoch = int32(binary.BigEndian.Uint32(b[8:]))
	s.StartOffset = int64(binary.BigEndian.Uint64(b[12:]))
	m.CreateTimestamp = int64(binary.BigEndian.Uint64(b[20:]))
	m.WriteTimestamp = int64(binary.BigEndian.Uint64(b[28:]))
	b = b[36:]
	n, w := binary.Uvarint(b)
	if w <= 0 || n == 0 || n-1 > uint64(len(b))/20 {
		return m, s, bad("state batch count")
	}
	b = b[w:]
	for i := uint64(0); i < n-1; i++ {
		if len(b) < 20 {
			return m, s, bad("truncated state batch")
		}
		sb := StateBatch{
			FirstOffset:   int64(binary.BigEndian.Uint64(b)),
			LastOffset:    int64(binary.BigEndian.Uint64(b[8:])),
			State:         RecordState(b[16]),
			DeliveryCount: int16(binary.BigEndian.Uint16(b[17:])),
		}
		if b[19] != 0 {
			return m, s, bad("tagged fields in a state batch")
		}
		if sb.LastOffset < sb.FirstOffset || sb.FirstOffset < s.StartOffset {
			return m, s, bad(fmt.Sprintf("state batch [%d, %d] before start %d", sb.FirstOffset, sb.LastOffset, s.StartOffset))
		}
		switch sb.State {
		case Available, Acquired, Acknowledged, Archived:
		default:
			return m, s, bad(fmt.Sprintf("delivery state %d", sb.State))
		}
		s.Batches = append(s.Batches, sb)
		b = b[20:]
	}
	if len(b) != 1 || b[0] != 0 {
		return m, s, bad("trailing bytes")
	}
	return m, s, nil
}
