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
