package abi

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/retention"
)

func encodeRecords(recs []partitioner.Record, fields int32) []byte {
	n := 0
	for i := range recs {
		n += RecordSize(&recs[i], fields)
	}
	buf := make([]byte, n)
	off := 0
	for i := range recs {
		off += PutRecord(buf[off:], &recs[i], fields)
	}
	if off != n {
		panic("size mismatch")
	}
	return buf
}

func TestRecordsRoundTrip(t *testing.T) {
	recs := []partitioner.Record{
		{Key: []byte("k1"), Value: []byte("v1"), Headers: []partitioner.Header{{Key: "region", Value: []byte("eu")}, {Key: "n", Value: nil}}},
		{},
		{Key: []byte{}, Value: []byte("x")},
	}
	for _, tc := range []struct {
		name   string
		fields int32
		want   []partitioner.Record
	}{
		{"all", AllFields, recs},
		{"keys only", FieldKey, []partitioner.Record{{Key: []byte("k1")}, {}, {Key: []byte{}}}},
		{"headers only", FieldHeaders, []partitioner.Record{{Headers: recs[0].Headers}, {}, {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := encodeRecords(recs, tc.fields)
			var d RecordDecoder
			var got []partitioner.Record
			err := d.Decode(buf, len(recs), func(i int, r partitioner.Record) error {
				r.Headers = append([]partitioner.Header(nil), r.Headers...)
				got = append(got, r)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				w := tc.want[i]
				g := got[i]
				if (g.Key == nil) != (w.Key == nil) || !bytes.Equal(g.Key, w.Key) || (g.Value == nil) != (w.Value == nil) || !bytes.Equal(g.Value, w.Value) {
					t.Errorf("record %d: got %+v want %+v", i, g, w)
				}
				if len(g.Headers) != len(w.Headers) {
					t.Fatalf("record %d headers %v want %v", i, g.Headers, w.Headers)
				}
				for j := range g.Headers {
					if g.Headers[j].Key != w.Headers[j].Key || (g.Headers[j].Value == nil) != (w.Headers[j].Value == nil) {
						t.Errorf("record %d header %d: %+v", i, j, g.Headers[j])
					}
				}
			}
		})
	}
}

func TestRecordsMalformed(t *testing.T) {
	good := encodeRecords([]partitioner.Record{{Key: []byte("key"), Headers: []partitioner.Header{{Key: "h", Value: []byte("v")}}}}, AllFields)
	for _, tc := range []struct {
		name  string
		buf   []byte
		count int
	}{
		{"empty", nil, 1},
		{"truncated", good[:len(good)-1], 1},
		{"too many records", good, 5},
		{"negative count", good, -1},
		{"huge key length", []byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0}, 1},
		{"negative key length", []byte{0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}, 1},
		{"huge header count", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d RecordDecoder
			err := d.Decode(tc.buf, tc.count, func(int, partitioner.Record) error { return nil })
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestPartitionRoundTrip(t *testing.T) {
	p := retention.Partition{
		Topic: "orders", Partition: 3, LogStartOffset: 10, LogEndOffset: 500, HighWatermark: 490, NowMs: 1700000000000,
		Segments: []retention.Segment{{BaseOffset: 10, NextOffset: 200, SizeBytes: 4096, LargestTimestampMs: 1699}, {BaseOffset: 200, NextOffset: 500, SizeBytes: 100, LargestTimestampMs: -1}},
		Groups:   []retention.GroupOffset{{Group: "billing", Offset: 150}, {Group: "audit", Offset: -1}},
	}
	buf := make([]byte, PartitionSize(&p))
	if n := PutPartition(buf, &p); n != len(buf) {
		t.Fatalf("wrote %d of %d", n, len(buf))
	}
	got, err := DecodePartition(buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("got %+v\nwant %+v", got, p)
	}
	for cut := 0; cut < len(buf); cut++ {
		if _, err := DecodePartition(buf[:cut]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
	if _, err := DecodePartition(append(buf, 0)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("trailing byte: %v", err)
	}
}

func TestActionsRoundTrip(t *testing.T) {
	acts := []auth.Action{
		{Principal: auth.User("alice"), Host: "10.0.0.1", Operation: auth.OpWrite, Resource: auth.Resource{Type: auth.ResourceTopic, Name: "orders", Pattern: auth.PatternLiteral}},
		{Principal: auth.Anonymous, Operation: auth.OpDescribe, Resource: auth.Resource{Type: auth.ResourceCluster, Name: auth.ClusterName, Pattern: auth.PatternLiteral}},
	}
	buf := make([]byte, ActionsSize(acts))
	PutActions(buf, acts)
	var got []auth.Action
	if err := DecodeActions(buf, len(acts), func(_ int, a auth.Action) error { got = append(got, a); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, acts) {
		t.Fatalf("got %+v", got)
	}
	for cut := 0; cut < len(buf); cut++ {
		if err := DecodeActions(buf[:cut], len(acts), func(int, auth.Action) error { return nil }); !errors.Is(err, ErrMalformed) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
}

func FuzzDecodeRecords(f *testing.F) {
	f.Add(encodeRecords([]partitioner.Record{{Key: []byte("k"), Headers: []partitioner.Header{{Key: "a", Value: []byte("b")}}}}, AllFields), 1)
	f.Fuzz(func(t *testing.T, buf []byte, count int) {
		var d RecordDecoder
		_ = d.Decode(buf, count, func(int, partitioner.Record) error { return nil })
	})
}

func FuzzDecodePartition(f *testing.F) {
	p := retention.Partition{Topic: "t", Segments: []retention.Segment{{BaseOffset: 0, NextOffset: 1, SizeBytes: 2, LargestTimestampMs: 3}}, Groups: []retention.GroupOffset{{Group: "g", Offset: 1}}}
	buf := make([]byte, PartitionSize(&p))
	PutPartition(buf, &p)
	f.Add(buf)
	f.Fuzz(func(t *testing.T, buf []byte) {
		p, err := DecodePartition(buf)
		if err != nil {
			return
		}
		out := make([]byte, PartitionSize(&p))
		PutPartition(out, &p)
		if !bytes.Equal(out, buf) {
			t.Fatalf("re-encoding differs")
		}
	})
}

func FuzzDecodeActions(f *testing.F) {
	acts := []auth.Action{{Principal: auth.User("a"), Resource: auth.Resource{Name: "t"}}}
	buf := make([]byte, ActionsSize(acts))
	PutActions(buf, acts)
	f.Add(buf, 1)
	f.Fuzz(func(t *testing.T, buf []byte, count int) {
		_ = DecodeActions(buf, count, func(int, auth.Action) error { return nil })
	})
}
