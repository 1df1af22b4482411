package partitioner

import (
	"encoding/binary"
	"fmt"
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
		for _, form := range []string{"value", "ref", "batch"} {
			t.Run(fmt.Sprintf("%s/%s", tc.name, form), func(t *testing.T) {
				Register(tc.fn)
				fn := tc.fn
				switch {
				case form == "ref" && fn != nil:
					RegisterRef(func(r *Record, n int) int { return fn(*r, n) })
				case form == "batch" && fn != nil:
					RegisterBatch(func(recs []Record, n int32, out []int32) error {
						for i := range recs {
							out[i] = int32(fn(recs[i], int(n)))
						}
						return nil
					})
				}
				buf := append([]byte(nil), tc.buf...)
				if code := Handle(buf, tc.count, tc.n); code != tc.code {
					t.Fatalf("code %d, want %d", code, tc.code)
				}
				if tc.code != abi.OK {
					return
				}
				for i, r := range recs {
					got := int32(binary.LittleEndian.Uint32(buf[4*i:]))
					if want := sdkpart.KeyPartition(r.Key, tc.n); got != want {
						t.Errorf("record %d: %d want %d", i, got, want)
					}
				}
			})
		}
	}
	Uses(Key | Headers)
	if Fields() != 5 {
		t.Fatalf("fields %d", Fields())
	}
}

// TestRegisterBatch checks what a batch handler sees: every record with
// its own headers (the header slice grows while the batch is decoded),
// output slots that need not be aligned, and an error failing the batch.
func TestRegisterBatch(t *testing.T) {
	defer Register(nil)
	var recs []Record
	for i := range 40 {
		r := Record{Key: []byte(fmt.Sprintf("k%d", i))}
		for j := range i % 3 {
			r.Headers = append(r.Headers, Header{Key: fmt.Sprintf("h%d-%d", i, j), Value: []byte{byte(j)}})
		}
		if i%5 == 0 {
			r.Key, r.Value = nil, []byte("v")
		}
		recs = append(recs, r)
	}
	var seen []Record
	RegisterBatch(func(rs []Record, n int32, out []int32) error {
		seen = append(seen[:0], rs...)
		for i := range rs {
			out[i] = int32(i) % n
		}
		return nil
	})
	for _, shift := range []int{0, 1} {
		enc := batch(recs)
		buf := append(make([]byte, shift), enc...)[shift:]
		if code := Handle(buf, int32(len(recs)), 7); code != abi.OK {
			t.Fatalf("shift %d: code %d", shift, code)
		}
		if fmt.Sprint(seen) != fmt.Sprint(recs) {
			t.Fatalf("shift %d: handler saw\n%v\nwant\n%v", shift, seen, recs)
		}
		for i := range recs {
			if got := binary.LittleEndian.Uint32(buf[4*i:]); got != uint32(i%7) {
				t.Fatalf("shift %d: slot %d = %d", shift, i, got)
			}
		}
	}
	RegisterBatch(func([]Record, int32, []int32) error { return fmt.Errorf("no") })
	if code := Handle(batch(recs), int32(len(recs)), 7); code != abi.CodeFailed {
		t.Fatalf("error: code %d", code)
	}
}

func TestKeyPartitionMatchesKafka(t *testing.T) {
	key := []byte("abcdefghijklmnopqrstuvwxyz0123456789")
	for n := 0; n <= len(key); n++ {
		for _, parts := range []int{1, 3, 64, 1000} {
			// Unaligned starts too: the guest reads 4 bytes at a time.
			for s := 0; s < 4 && s <= n; s++ {
				k := key[s:n]
				if got, want := KeyPartition(k, parts), int(sdkpart.KeyPartition(k, int32(parts))); got != want {
					t.Fatalf("KeyPartition(%q, %d) = %d, want %d", k, parts, got, want)
				}
			}
		}
	}
	if KeyPartition(nil, 5) != int(sdkpart.KeyPartition(nil, 5)) || KeyPartition([]byte("x"), 0) != 0 {
		t.Fatal("edge cases")
	}
}

// TestMurmur2MatchesSDK checks the guest's murmur2 (word loads, two
// blocks per iteration, a tail without jumps) against sdk/partitioner's
// for every length to 40 and tails cut from a longer buffer.
func TestMurmur2MatchesSDK(t *testing.T) {
	buf := make([]byte, 64)
	for i := range buf {
		buf[i] = byte(i*131 + 7)
	}
	for n := 0; n <= 40; n++ {
		for _, off := range []int{0, 1, 3, 5} {
			key := buf[off : off+n]
			if got, want := murmur2(key), uint32(sdkpart.Murmur2(key)); got != want {
				t.Fatalf("len %d at %d: murmur2 %#x, sdk %#x", n, off, got, want)
			}
		}
	}
}
