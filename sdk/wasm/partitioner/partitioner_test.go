package partitioner

import (
	"encoding/binary"
	"testing"

	sdkpart "github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

// batch encodes records as the host does: slots, then records.
func batch(recs []Record) []byte {
	size := 4 * len(recs)
	for i := range recs {
		size += abi.RecordSize(&recs[i], abi.AllFields)
	}
	buf := make([]byte, size)
	off := 4 * len(recs)
	for i := range recs {
		off += abi.PutRecord(buf[off:], &recs[i], abi.AllFields)
	}
	return buf
}

func TestHandle(t *testing.T) {
	recs := []Record{{Key: []byte("21")}, {Key: []byte("foobar"), Headers: []Header{{Key: "region", Value: []byte("eu")}}}}
	for _, tc := range []struct {
		name  string
		fn    func(Record, int) int
		buf   []byte
		count int32
		n     int32
		code  int32
	}{
		{"kafka placement", func(r Record, n int) int { return KeyPartition(r.Key, n) }, batch(recs), 2, 5, abi.OK},
		{"no handler", nil, batch(recs), 2, 5, abi.CodeNoHandler},
		{"out of range", func(Record, int) int { return 5 }, batch(recs), 2, 5, abi.CodeFailed},
		{"panic", func(Record, int) int { panic("x") }, batch(recs), 2, 5, abi.CodeFailed},
		{"zero partitions", func(Record, int) int { return 0 }, batch(recs), 2, 0, abi.CodeBadInput},
		{"count past buffer", func(Record, int) int { return 0 }, batch(recs), 1000, 5, abi.CodeBadInput},
		{"truncated", func(Record, int) int { return 0 }, batch(recs)[:15], 2, 5, abi.CodeBadInput},
		{"negative count", func(Record, int) int { return 0 }, batch(recs), -1, 5, abi.CodeBadInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Register(tc.fn)
			if code := Handle(tc.buf, tc.count, tc.n); code != tc.code {
				t.Fatalf("code %d, want %d", code, tc.code)
			}
			if tc.code != abi.OK {
				return
			}
			for i, r := range recs {
				got := int32(binary.LittleEndian.Uint32(tc.buf[4*i:]))
				if want := sdkpart.KeyPartition(r.Key, tc.n); got != want {
					t.Errorf("record %d: %d want %d", i, got, want)
				}
			}
		})
	}
	Uses(Key | Headers)
	if Fields() != 5 {
		t.Fatalf("fields %d", Fields())
	}
}
