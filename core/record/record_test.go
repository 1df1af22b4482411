package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
)

// testRecords returns n records with varied keys, values and headers.
func testRecords(n int) []Record {
	rs := make([]Record, n)
	for i := range rs {
		rs[i] = Record{
			TimestampDelta: int64(i * 3),
			Key:            []byte(fmt.Sprintf("key-%d", i)),
			Value:          bytes.Repeat([]byte{byte('a' + i%26)}, 10+i%50),
		}
		if i%3 == 0 {
			rs[i].Key = nil
		}
		if i%4 == 1 {
			rs[i].Headers = []RecordHeader{{Key: "h1", Value: []byte("v1")}, {Key: "h2", Value: nil}}
		}
	}
	return rs
}

func mustEncode(t testing.TB, spec BatchSpec, rs []Record) []byte {
	t.Helper()
	b, err := Encode(spec, rs)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return b
}

// reseal rewrites the length field and CRC after a test edits a batch.
func reseal(b []byte) []byte {
	binary.BigEndian.PutUint32(b[posLength:], uint32(len(b)-lengthOverhead))
	binary.BigEndian.PutUint32(b[posCRC:], Checksum(b))
	return b
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		for _, n := range []int{1, 7, 500} {
			t.Run(fmt.Sprintf("%s/%d", codec, n), func(t *testing.T) {
				spec := BatchSpec{
					BaseOffset: 42, PartitionLeaderEpoch: 3, Codec: codec, Transactional: true,
					FirstTimestamp: 1_700_000_000_000, ProducerID: 9, ProducerEpoch: 2, BaseSequence: 100,
				}
				want := testRecords(n)
				b := mustEncode(t, spec, want)
				h, err := Validate(b, 1<<20)
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if h.BaseOffset != 42 || h.PartitionLeaderEpoch != 3 || h.Codec() != codec || !h.IsTransactional() ||
					h.IsControl() || h.LogAppendTime() || h.NumRecords != int32(n) || h.LastOffsetDelta != int32(n-1) ||
					h.ProducerID != 9 || h.ProducerEpoch != 2 || h.BaseSequence != 100 || h.Size() != len(b) {
					t.Fatalf("header mismatch: %+v", h)
				}
				if wantMax := spec.FirstTimestamp + int64((n-1)*3); h.MaxTimestamp != wantMax {
					t.Fatalf("MaxTimestamp = %d, want %d", h.MaxTimestamp, wantMax)
				}
				i := 0
				err = Records(b, 1<<20, func(r Record) error {
					w := want[i]
					if r.OffsetDelta != int32(i) || r.TimestampDelta != w.TimestampDelta ||
						!bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) || !bytes.Equal(r.Value, w.Value) ||
						len(r.Headers) != len(w.Headers) {
						return fmt.Errorf("record %d = %+v, want %+v", i, r, w)
					}
					for j := range r.Headers {
						if r.Headers[j].Key != w.Headers[j].Key || !bytes.Equal(r.Headers[j].Value, w.Headers[j].Value) ||
							(r.Headers[j].Value == nil) != (w.Headers[j].Value == nil) {
							return fmt.Errorf("record %d header %d = %+v, want %+v", i, j, r.Headers[j], w.Headers[j])
						}
					}
					if r.Timestamp(h) != spec.FirstTimestamp+w.TimestampDelta {
						return fmt.Errorf("record %d timestamp %d", i, r.Timestamp(h))
					}
					i++
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if i != n {
					t.Fatalf("Records visited %d, want %d", i, n)
				}
			})
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	tests := []struct {
		name string
		spec BatchSpec
		rs   []Record
	}{
		{"no records", BatchSpec{}, nil},
		{"unknown codec", BatchSpec{Codec: 5}, testRecords(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Encode(tt.spec, tt.rs); err == nil {
				t.Fatal("Encode succeeded")
			}
		})
	}
}

func TestHeaderAccessors(t *testing.T) {
	tests := []struct {
		name     string
		h        Header
		lastOff  int64
		lastSeq  int32
		size     int
		codec    Codec
		txn, ctl bool
		lat      bool
	}{
		{"plain", Header{BaseOffset: 10, LastOffsetDelta: 4, BaseSequence: 7, Length: 100}, 14, 11, 112, CodecNone, false, false, false},
		{"no sequence", Header{LastOffsetDelta: 4, BaseSequence: -1}, 4, -1, 12, CodecNone, false, false, false},
		{"wraps", Header{LastOffsetDelta: 5, BaseSequence: math.MaxInt32 - 2, Attributes: 0x33}, 5, 2, 12, CodecLZ4, true, true, false},
		{"at max", Header{LastOffsetDelta: 2, BaseSequence: math.MaxInt32 - 2, Attributes: 0x0c}, 2, math.MaxInt32, 12, CodecZstd, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.h
			if h.LastOffset() != tt.lastOff || h.LastSequence() != tt.lastSeq || h.Size() != tt.size ||
				h.Codec() != tt.codec || h.IsTransactional() != tt.txn || h.IsControl() != tt.ctl || h.LogAppendTime() != tt.lat {
				t.Fatalf("got lastOff %d lastSeq %d size %d codec %v txn %v ctl %v lat %v",
					h.LastOffset(), h.LastSequence(), h.Size(), h.Codec(), h.IsTransactional(), h.IsControl(), h.LogAppendTime())
			}
		})
	}
}

func TestInPlaceSetters(t *testing.T) {
	b := mustEncode(t, BatchSpec{FirstTimestamp: 1000}, testRecords(3))
	SetBaseOffset(b, 1<<40)
	SetPartitionLeaderEpoch(b, 77)
	h, err := Validate(b, 1<<20)
	if err != nil {
		t.Fatalf("after SetBaseOffset/SetPartitionLeaderEpoch: %v", err)
	}
	if h.BaseOffset != 1<<40 || h.PartitionLeaderEpoch != 77 {
		t.Fatalf("header %+v", h)
	}
	SetLogAppendTime(b, 5555)
	h, err = Validate(b, 1<<20)
	if err != nil {
		t.Fatalf("after SetLogAppendTime: %v", err)
	}
	if !h.LogAppendTime() || h.MaxTimestamp != 5555 {
		t.Fatalf("header %+v", h)
	}
	err = Records(b, 1<<20, func(r Record) error {
		if ts := r.Timestamp(h); ts != 5555 {
			return fmt.Errorf("record timestamp %d under log append time", ts)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestParseHeaderErrors(t *testing.T) {
	good := mustEncode(t, BatchSpec{}, testRecords(1))
	v1 := append([]byte(nil), good...)
	v1[posMagic] = 1
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"short", good[:HeaderSize-1], ErrTruncated},
		{"magic 1", v1, ErrUnsupportedMagic},
		{"short magic 0", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 1, 2}, ErrUnsupportedMagic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseHeader(tt.b); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestValidateErrors(t *testing.T) {
	base := func() []byte { return mustEncode(t, BatchSpec{FirstTimestamp: 1}, testRecords(3)) }
	// body builds a batch around a hand-made records section.
	body := func(n int32, lastDelta int32, recs ...[]byte) []byte {
		b := base()[:HeaderSize]
		for _, r := range recs {
			b = append(b, r...)
		}
		binary.BigEndian.PutUint32(b[posNumRecords:], uint32(n))
		binary.BigEndian.PutUint32(b[posLastOffsetDelta:], uint32(lastDelta))
		return reseal(b)
	}
	rec := func(offsetDelta int32, extra ...byte) []byte {
		r := appendRecord(nil, offsetDelta, Record{Value: []byte("v")})
		if len(extra) > 0 {
			// Grow the body: rewrite the length prefix to include extra.
			inner := append(r[1:], extra...)
			r = append(appendVarint(nil, int32(len(inner))), inner...)
		}
		return r
	}
	tests := []struct {
		name string
		b    []byte
		want error
		msg  string
	}{
		{"crc flip", func() []byte { b := base(); b[len(b)-1] ^= 1; return b }(), ErrCorrupt, "crc mismatch"},
		{"magic 0", func() []byte { b := base(); b[posMagic] = 0; return b }(), ErrUnsupportedMagic, "magic"},
		{"length too long", func() []byte {
			b := base()
			binary.BigEndian.PutUint32(b[posLength:], uint32(len(b)))
			return b
		}(), ErrCorrupt, "length field"},
		{"length below minimum", func() []byte {
			b := base()
			binary.BigEndian.PutUint32(b[posLength:], 10)
			return b
		}(), ErrCorrupt, "minimum"},
		{"short batch", base()[:30], ErrCorrupt, "shorter"},
		{"negative count", body(-1, 0), ErrCorrupt, "negative record count"},
		{"negative last delta", body(1, -1, rec(0)), ErrCorrupt, "negative last offset delta"},
		{"count too high", body(2, 1, rec(0)), ErrCorrupt, "declares 2 records"},
		{"count too low", body(1, 1, rec(0), rec(1)), ErrCorrupt, "follow"},
		{"offset delta gap", body(2, 1, rec(0), rec(2)), ErrCorrupt, "offset delta 2"},
		{"last delta mismatch", body(2, 5, rec(0), rec(1)), ErrCorrupt, "last offset delta"},
		{"record truncated", body(1, 0, rec(0)[:4]), ErrCorrupt, "exceeds"},
		{"bytes left in record", body(1, 0, rec(0, 9)), ErrCorrupt, "left over"},
		{"malformed varint", body(1, 0, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), ErrCorrupt, "malformed length"},
		{"null header key", body(1, 0, func() []byte {
			inner := []byte{0}
			inner = appendVarlong(inner, 0)
			inner = appendVarint(inner, 0)
			inner = appendVarint(inner, -1)
			inner = appendVarint(inner, -1)
			inner = appendVarint(inner, 1)
			inner = appendVarint(inner, -1)
			inner = appendVarint(inner, -1)
			return append(appendVarint(nil, int32(len(inner))), inner...)
		}()), ErrCorrupt, "null key"},
		{"huge header count", body(1, 0, func() []byte {
			inner := []byte{0}
			inner = appendVarlong(inner, 0)
			inner = appendVarint(inner, 0)
			inner = appendVarint(inner, -1)
			inner = appendVarint(inner, -1)
			inner = appendVarint(inner, math.MaxInt32)
			return append(appendVarint(nil, int32(len(inner))), inner...)
		}()), ErrCorrupt, "header count"},
		{"unknown codec", func() []byte {
			b := base()
			binary.BigEndian.PutUint16(b[posAttributes:], 6)
			return reseal(b)
		}(), ErrCorrupt, "unknown compression codec"},
		{"gzip garbage", func() []byte {
			b := base()
			binary.BigEndian.PutUint16(b[posAttributes:], uint16(CodecGzip))
			return reseal(b)
		}(), ErrCorrupt, "gzip"},
		{"too large", mustEncode(t, BatchSpec{Codec: CodecZstd}, testRecords(200)), ErrTooLarge, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Validate(tt.b, 1000)
			if tt.name != "too large" {
				_, err = Validate(tt.b, 1<<20)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !bytes.Contains([]byte(err.Error()), []byte(tt.msg)) {
				t.Fatalf("err = %q, want it to mention %q", err, tt.msg)
			}
		})
	}
}

func TestValidateZeroRecords(t *testing.T) {
	b := mustEncode(t, BatchSpec{}, testRecords(1))[:HeaderSize]
	binary.BigEndian.PutUint32(b[posNumRecords:], 0)
	binary.BigEndian.PutUint32(b[posLastOffsetDelta:], 4)
	h, err := Validate(reseal(b), 100)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if h.NumRecords != 0 || h.LastOffset() != 4 {
		t.Fatalf("header %+v", h)
	}
}
