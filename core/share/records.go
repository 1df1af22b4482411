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

// Record types of __share_group_state keys, Kafka's numbering: a
// ShareSnapshot holds a share-partition's whole state, a ShareUpdate the
// state batches one write changed since the last snapshot.
const (
	recordShareSnapshot int16 = 0
	recordShareUpdate   int16 = 1
)

// EncodeSnapshotKey is Kafka's ShareSnapshotKey: the record type (0), then
// the group id, topic id and partition.
func EncodeSnapshotKey(k PartitionKey) []byte { return encodeStateKey(recordShareSnapshot, k) }

// EncodeUpdateKey is Kafka's ShareUpdateKey: ShareSnapshotKey's fields
// after the record type 1.
func EncodeUpdateKey(k PartitionKey) []byte { return encodeStateKey(recordShareUpdate, k) }

func encodeStateKey(typ int16, k PartitionKey) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(typ))
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.Group)))
	b = append(b, k.Group...)
	b = append(b, k.TopicID[:]...)
	return binary.BigEndian.AppendUint32(b, uint32(k.Partition))
}

// DecodeSnapshotKey reads a ShareSnapshotKey; ok is false for a key of
// another record type.
func DecodeSnapshotKey(b []byte) (k PartitionKey, ok bool, err error) {
	k, update, ok, err := DecodeStateKey(b)
	return k, ok && !update, err
}

// DecodeStateKey reads a ShareSnapshotKey (update false) or a
// ShareUpdateKey (update true); ok is false for a key of another record
// type.
func DecodeStateKey(b []byte) (k PartitionKey, update, ok bool, err error) {
	if len(b) < 2 {
		return k, false, false, fmt.Errorf("%w: key of %d bytes", ErrCorruptRecord, len(b))
	}
	switch int16(binary.BigEndian.Uint16(b)) {
	case recordShareSnapshot:
	case recordShareUpdate:
		update = true
	default:
		return k, false, false, nil
	}
	b = b[2:]
	if len(b) < 2 {
		return k, false, false, fmt.Errorf("%w: truncated group id", ErrCorruptRecord)
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if len(b) != n+16+4 {
		return k, false, false, fmt.Errorf("%w: key of %d bytes after a %d-byte group id", ErrCorruptRecord, len(b), n)
	}
	k.Group = string(b[:n])
	copy(k.TopicID[:], b[n:n+16])
	k.Partition = int32(binary.BigEndian.Uint32(b[n+16:]))
	return k, update, true, nil
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
	return appendStateBatches(b, s.Batches)
}

// appendStateBatches appends the StateBatches array of both values and
// the value's empty tagged fields.
func appendStateBatches(b []byte, batches []StateBatch) []byte {
	b = binary.AppendUvarint(b, uint64(len(batches)+1))
	for _, sb := range batches {
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
	batches, err := decodeStateBatches(b, s.StartOffset)
	if err != nil {
		return m, s, err
	}
	s.Batches = batches
	return m, s, nil
}

// decodeStateBatches reads the StateBatches array and the value's tagged
// fields (Kafka 4.2's DeliveryCompleteCount among them, skipped); no
// batch may start below start unless start is -1.
func decodeStateBatches(b []byte, start int64) ([]StateBatch, error) {
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrCorruptRecord, what) }
	n, w := binary.Uvarint(b)
	if w <= 0 || n == 0 || n-1 > uint64(len(b))/20 {
		return nil, bad("state batch count")
	}
	b = b[w:]
	var out []StateBatch
	for i := uint64(0); i < n-1; i++ {
		if len(b) < 20 {
			return nil, bad("truncated state batch")
		}
		sb := StateBatch{
			FirstOffset:   int64(binary.BigEndian.Uint64(b)),
			LastOffset:    int64(binary.BigEndian.Uint64(b[8:])),
			State:         RecordState(b[16]),
			DeliveryCount: int16(binary.BigEndian.Uint16(b[17:])),
		}
		if sb.LastOffset < sb.FirstOffset || (start != -1 && sb.FirstOffset < start) {
			return nil, bad(fmt.Sprintf("state batch [%d, %d] before start %d", sb.FirstOffset, sb.LastOffset, start))
		}
		switch sb.State {
		case Available, Acquired, Acknowledged, Archived:
		default:
			return nil, bad(fmt.Sprintf("delivery state %d", sb.State))
		}
		rest, err := skipTaggedFields(b[19:])
		if err != nil {
			return nil, err
		}
		out = append(out, sb)
		b = rest
	}
	rest, err := skipTaggedFields(b)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, bad("trailing bytes")
	}
	return out, nil
}

// skipTaggedFields skips a flexible message's tagged fields.
func skipTaggedFields(b []byte) ([]byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: tagged fields", ErrCorruptRecord)
	}
	b = b[w:]
	for range n {
		_, tw := binary.Uvarint(b)
		if tw <= 0 {
			return nil, fmt.Errorf("%w: tagged field tag", ErrCorruptRecord)
		}
		b = b[tw:]
		size, sw := binary.Uvarint(b)
		if sw <= 0 || size > uint64(len(b)-sw) {
			return nil, fmt.Errorf("%w: tagged field size", ErrCorruptRecord)
		}
		b = b[sw+int(size):]
	}
	return b, nil
}

// UpdateMeta are the epochs a ShareUpdateValue carries: the snapshot it
// applies to and the share-partition leader's epoch (-1: unchanged).
type UpdateMeta struct {
	SnapshotEpoch int32
	LeaderEpoch   int32
}

// EncodeUpdateValue is Kafka's ShareUpdateValue version 0 in its flexible
// encoding: the snapshot and leader epochs, the start offset (-1: not
// changed) and the state batches the write changed.
func EncodeUpdateValue(m UpdateMeta, s Snapshot) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(m.SnapshotEpoch))
	b = binary.BigEndian.AppendUint32(b, uint32(m.LeaderEpoch))
	b = binary.BigEndian.AppendUint64(b, uint64(s.StartOffset))
	return appendStateBatches(b, s.Batches)
}

// DecodeUpdateValue reads a ShareUpdateValue.
func DecodeUpdateValue(b []byte) (UpdateMeta, Snapshot, error) {
	var m UpdateMeta
	var s Snapshot
	if len(b) < 2+4*2+8 {
		return m, s, fmt.Errorf("%w: update value of %d bytes", ErrCorruptRecord, len(b))
	}
	if v := binary.BigEndian.Uint16(b); v != 0 {
		return m, s, fmt.Errorf("%w: update value version %d", ErrCorruptRecord, v)
	}
	m.SnapshotEpoch = int32(binary.BigEndian.Uint32(b[2:]))
	m.LeaderEpoch = int32(binary.BigEndian.Uint32(b[6:]))
	s.StartOffset = int64(binary.BigEndian.Uint64(b[10:]))
	if s.StartOffset < -1 {
		return m, s, fmt.Errorf("%w: update start offset %d", ErrCorruptRecord, s.StartOffset)
	}
	batches, err := decodeStateBatches(b[18:], s.StartOffset)
	if err != nil {
		return m, s, err
	}
	s.Batches = batches
	return m, s, nil
}
