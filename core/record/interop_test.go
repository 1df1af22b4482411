package record

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEncodeReadByFranzGo checks our encoding against an independent decoder.
func TestEncodeReadByFranzGo(t *testing.T) {
	want := testRecords(9)
	b := mustEncode(t, BatchSpec{BaseOffset: 5, PartitionLeaderEpoch: 2, FirstTimestamp: 1234, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, want)
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(b); err != nil {
		t.Fatalf("kmsg.RecordBatch.ReadFrom: %v", err)
	}
	if kb.FirstOffset != 5 || kb.PartitionLeaderEpoch != 2 || kb.Magic != 2 || uint32(kb.CRC) != Checksum(b) ||
		kb.NumRecords != 9 || kb.LastOffsetDelta != 8 || kb.FirstTimestamp != 1234 || kb.MaxTimestamp != 1234+24 {
		t.Fatalf("franz-go header %+v", kb)
	}
	p := kb.Records
	for i, w := range want {
		var r kmsg.Record
		// A record is a varint length then the body.
		l, n := readVarint(p)
		if err := r.ReadFrom(p[:n+int(l)]); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		p = p[n+int(l):]
		if r.OffsetDelta != int32(i) || r.TimestampDelta64 != w.TimestampDelta || !bytes.Equal(r.Key, w.Key) ||
			!bytes.Equal(r.Value, w.Value) || len(r.Headers) != len(w.Headers) {
			t.Fatalf("record %d = %+v, want %+v", i, r, w)
		}
	}
	if len(p) != 0 {
		t.Fatalf("%d bytes left after the records", len(p))
	}
}
