package share

import (
	"errors"
	"reflect"
	"testing"
)

func TestSnapshotRecordRoundTrip(t *testing.T) {
	k := PartitionKey{Group: "g1", TopicPartition: TopicPartition{TopicID: [16]byte{1, 2, 3}, Partition: 7}}
	kb := EncodeSnapshotKey(k)
	got, ok, err := DecodeSnapshotKey(kb)
	if err != nil || !ok || got != k {
		t.Fatalf("key: %+v %v %v", got, ok, err)
	}
	m := SnapshotMeta{SnapshotEpoch: 3, StateEpoch: 1, LeaderEpoch: 2, CreateTimestamp: 10, WriteTimestamp: 20}
	s := Snapshot{StartOffset: 5, Batches: []StateBatch{{5, 6, Available, 2}, {7, 7, Archived, 5}, {8, 9, Acknowledged, 1}}}
	vb := EncodeSnapshotValue(m, s)
	gm, gs, err := DecodeSnapshotValue(vb)
	if err != nil || gm != m || !reflect.DeepEqual(gs, s) {
		t.Fatalf("value: %+v %+v %v", gm, gs, err)
	}
	for i := range vb {
		if _, _, err := DecodeSnapshotValue(vb[:i]); !errors.Is(err, ErrCorruptRecord) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
	if _, _, err := DecodeSnapshotKey(kb[:5]); !errors.Is(err, ErrCorruptRecord) {
		t.Fatalf("truncated key: %v", err)
	}
}

func FuzzDecodeSnapshotValue(f *testing.F) {
	f.Add(EncodeSnapshotValue(SnapshotMeta{}, Snapshot{StartOffset: 1, Batches: []StateBatch{{1, 2, Available, 1}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, s, err := DecodeSnapshotValue(b)
		if err != nil {
			return
		}
		if _, _, err := DecodeSnapshotValue(EncodeSnapshotValue(m, s)); err != nil {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
	})
}

func TestUpdateRecordRoundTrip(t *testing.T) {
	k := PartitionKey{Group: "g1", TopicPartition: TopicPartition{TopicID: [16]byte{4, 5}, Partition: 2}}
	got, update, ok, err := DecodeStateKey(EncodeUpdateKey(k))
	if err != nil || !ok || !update || got != k {
		t.Fatalf("update key: %+v %v %v %v", got, update, ok, err)
	}
	if _, ok, err := DecodeSnapshotKey(EncodeUpdateKey(k)); ok || err != nil {
		t.Fatalf("an update key read as a snapshot key: %v %v", ok, err)
	}
	if _, update, ok, err := DecodeStateKey(EncodeSnapshotKey(k)); !ok || update || err != nil {
		t.Fatalf("snapshot key: %v %v %v", update, ok, err)
	}
	m := UpdateMeta{SnapshotEpoch: 4, LeaderEpoch: -1}
	for _, s := range []Snapshot{
		{StartOffset: -1, Batches: []StateBatch{{3, 4, Acknowledged, 1}}},
		{StartOffset: 9},
	} {
		vb := EncodeUpdateValue(m, s)
		gm, gs, err := DecodeUpdateValue(vb)
		if err != nil || gm != m || gs.StartOffset != s.StartOffset || len(gs.Batches) != len(s.Batches) ||
			(len(s.Batches) > 0 && !reflect.DeepEqual(gs.Batches, s.Batches)) {
			t.Fatalf("value %+v: %+v %+v %v", s, gm, gs, err)
		}
		for i := range vb {
			if _, _, err := DecodeUpdateValue(vb[:i]); !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("truncated at %d: %v", i, err)
			}
		}
	}
}

// Kafka 4.2 and later write DeliveryCompleteCount as tagged field 0 of
// both values; a reader skips tagged fields it does not know.
func TestStateValueTaggedFields(t *testing.T) {
	s := Snapshot{StartOffset: 5, Batches: []StateBatch{{5, 6, Available, 2}}}
	vb := EncodeSnapshotValue(SnapshotMeta{SnapshotEpoch: 1}, s)
	// The last byte is the value's empty tagged fields: one field, tag 0,
	// 4 bytes (DeliveryCompleteCount 7).
	tagged := append(append([]byte{}, vb[:len(vb)-1]...), 1, 0, 4, 0, 0, 0, 7)
	if _, gs, err := DecodeSnapshotValue(tagged); err != nil || !reflect.DeepEqual(gs, s) {
		t.Fatalf("snapshot with DeliveryCompleteCount: %+v %v", gs, err)
	}
	ub := EncodeUpdateValue(UpdateMeta{}, s)
	tagged = append(append([]byte{}, ub[:len(ub)-1]...), 1, 0, 4, 0, 0, 0, 7)
	if _, gs, err := DecodeUpdateValue(tagged); err != nil || !reflect.DeepEqual(gs, s) {
		t.Fatalf("update with DeliveryCompleteCount: %+v %v", gs, err)
	}
	if _, _, err := DecodeUpdateValue(append(append([]byte{}, ub[:len(ub)-1]...), 1, 0, 9, 0)); !errors.Is(err, ErrCorruptRecord) {
		t.Fatalf("a tagged field longer than the value: %v", err)
	}
}

func FuzzDecodeUpdateValue(f *testing.F) {
	f.Add(EncodeUpdateValue(UpdateMeta{}, Snapshot{StartOffset: -1, Batches: []StateBatch{{1, 2, Available, 1}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, s, err := DecodeUpdateValue(b)
		if err != nil {
			return
		}
		if _, _, err := DecodeUpdateValue(EncodeUpdateValue(m, s)); err != nil {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
	})
}
