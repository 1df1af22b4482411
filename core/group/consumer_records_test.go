package group

import (
	"errors"
	"reflect"
	"testing"
)

func TestConsumerRecordsBytes(t *testing.T) {
	// Keys are Kafka's non-flexible encoding; values are version 0 in the
	// flexible encoding.
	for _, tc := range []struct {
		name      string
		got, want []byte
	}{
		{"group metadata key", encodeConsumerKey(keyConsumerGroupMetadata, "g", ""), []byte{0, 3, 0, 1, 'g'}},
		{"member key", encodeConsumerKey(keyConsumerGroupCurrentAssignment, "g", "m"), []byte{0, 8, 0, 1, 'g', 0, 1, 'm'}},
		{"group metadata value", encodeConsumerMetadata(consumerMetadataValue{epoch: 5, metaHash: 0x0102}),
			[]byte{0, 0, 0, 0, 0, 5, 1, 0, 8, 0, 0, 0, 0, 0, 0, 1, 2}},
		{"target metadata value", encodeTargetMetadata(7), []byte{0, 0, 0, 0, 0, 7, 0}},
		{"target member value", encodeTargetMember([]topicIDPartitions{{id: [16]byte{15: 1}, partitions: []int32{2}}}),
			[]byte{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 2, 0, 0}},
		{"current assignment value", encodeCurrentAssignment(currentAssignmentValue{epoch: 3, previousEpoch: 2, state: kafkaStateUnrevoked}),
			[]byte{0, 0, 0, 0, 0, 3, 0, 0, 0, 2, 2, 1, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if string(tc.got) != string(tc.want) {
				t.Fatalf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

func TestConsumerRecordsRoundTrip(t *testing.T) {
	inst, regex, assignor := "i", "t.*", "range"
	mm := memberMetadataValue{instanceID: &inst, clientID: "c", clientHost: "/h", topics: []string{"a", "b"},
		regex: &regex, rebalanceTimeoutMs: 30000, assignor: &assignor}
	if got, err := decodeMemberMetadata(encodeMemberMetadata(mm)); err != nil || !reflect.DeepEqual(got, mm) {
		t.Fatalf("member metadata = %+v, %v", got, err)
	}
	cur := currentAssignmentValue{epoch: 9, previousEpoch: 8, state: kafkaStateUnreleased,
		assigned: []topicIDPartitions{{id: [16]byte{1}, partitions: []int32{0, 3}}},
		revoking: []topicIDPartitions{{id: [16]byte{2}, partitions: []int32{1}}}}
	if got, err := decodeCurrentAssignment(encodeCurrentAssignment(cur)); err != nil || !reflect.DeepEqual(got, cur) {
		t.Fatalf("current assignment = %+v, %v", got, err)
	}
	pm := []partitionMetadataTopic{{id: [16]byte{3}, name: "t", partitions: 12}}
	if got, err := decodePartitionMetadata(encodePartitionMetadata(pm)); err != nil || !reflect.DeepEqual(got, pm) {
		t.Fatalf("partition metadata = %+v, %v", got, err)
	}
	gm := consumerMetadataValue{epoch: 4, metaHash: 1 << 63}
	if got, err := decodeConsumerMetadata(encodeConsumerMetadata(gm)); err != nil || got != gm {
		t.Fatalf("group metadata = %+v, %v", got, err)
	}
	// An unknown tagged field is skipped.
	withTag := []byte{0, 0, 0, 0, 0, 4, 1, 5, 2, 0xaa, 0xbb}
	if got, err := decodeConsumerMetadata(withTag); err != nil || got.epoch != 4 {
		t.Fatalf("with an unknown tag = %+v, %v", got, err)
	}
}

func TestConsumerRecordsCorrupt(t *testing.T) {
	key := func(v int16) []byte { return encodeConsumerKey(v, "g", "m") }
	for _, tc := range []struct {
		name       string
		key, value []byte
	}{
		{"truncated member key", []byte{0, 5, 0, 1, 'g', 0, 4, 'm'}, nil},
		{"key with trailing bytes", append(key(keyConsumerGroupMetadata), 0), nil},
		{"value version 1", key(keyConsumerGroupMetadata), []byte{0, 1, 0, 0, 0, 1, 0}},
		{"short value", key(keyConsumerGroupTargetMetadata), []byte{0}},
		{"truncated epoch", key(keyConsumerGroupTargetMetadata), []byte{0, 0, 0, 0}},
		{"huge partition count", key(keyConsumerGroupTargetMember), []byte{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"huge topic count", key(keyConsumerGroupMemberMetadata), []byte{0, 0, 0, 0, 2, 'c', 2, 'h', 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"trailing bytes", key(keyConsumerGroupTargetMetadata), []byte{0, 0, 0, 0, 0, 7, 0, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := newLoadState()
			if err := ls.apply(tc.key, tc.value); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}

func FuzzDecodeConsumerRecords(f *testing.F) {
	f.Add(encodeConsumerKey(keyConsumerGroupCurrentAssignment, "g", "m"),
		encodeCurrentAssignment(currentAssignmentValue{epoch: 1, assigned: []topicIDPartitions{{partitions: []int32{1}}}}))
	f.Add(encodeConsumerKey(keyConsumerGroupMemberMetadata, "g", "m"), encodeMemberMetadata(memberMetadataValue{topics: []string{"t"}}))
	f.Add(encodeConsumerKey(keyConsumerGroupPartitionMetadata, "g", ""), encodePartitionMetadata([]partitionMetadataTopic{{name: "t"}}))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		ls := newLoadState()
		if err := ls.apply(key, value); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("not a corruption error: %v", err)
		}
	})
}
