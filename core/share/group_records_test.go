package share

import (
	"fmt"
	"testing"
)

func TestGroupRecordsRoundTrip(t *testing.T) {
	m := Member{MemberID: "m1", RackID: "r1", ClientID: "c", ClientHost: "/127.0.0.1", MemberEpoch: 7,
		Subscribed: []string{"a", "b"}, Assignment: map[string][]int32{"a": {0, 2}, "b": {1}}}
	ids := map[string][16]byte{"a": {1}, "b": {2}}
	names := map[[16]byte]string{{1}: "a", {2}: "b"}
	for _, tc := range []struct {
		key  []byte
		want GroupRecordKey
	}{
		{EncodeGroupMetadataKey("g"), GroupRecordKey{Type: 11, Group: "g"}},
		{EncodeMemberKey("g", "m1"), GroupRecordKey{Type: 10, Group: "g", MemberID: "m1"}},
		{EncodeAssignmentKey("g", "m1"), GroupRecordKey{Type: 14, Group: "g", MemberID: "m1"}},
	} {
		k, ok, err := DecodeGroupRecordKey(tc.key)
		if err != nil || !ok || k != tc.want {
			t.Fatalf("key %x: %+v %v %v, want %+v", tc.key, k, ok, err, tc.want)
		}
	}
	if _, ok, err := DecodeGroupRecordKey(EncodeSnapshotKey(PartitionKey{Group: "g"})); ok || err != nil {
		t.Fatalf("a share snapshot key read as a group record: %v %v", ok, err)
	}
	if e, err := DecodeGroupMetadataValue(EncodeGroupMetadataValue(9)); e != 9 || err != nil {
		t.Fatalf("group epoch %d %v, want 9", e, err)
	}
	got := Member{MemberID: "m1"}
	if err := DecodeMemberValue(EncodeMemberValue(m), &got); err != nil {
		t.Fatal(err)
	}
	if err := DecodeAssignmentValue(EncodeAssignmentValue(m, ids), &got, names); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", m) {
		t.Fatalf("member %+v, want %+v", got, m)
	}
	if err := DecodeMemberValue([]byte{0, 0, 5}, &got); err == nil {
		t.Fatal("a truncated member value decoded")
	}
}
