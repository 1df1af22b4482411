package record

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestDecodeJavaClientBatches decodes batches written by Apache Kafka's Java
// client with every codec (see testdata/README.md).
func TestDecodeJavaClientBatches(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "java-"+codec.String()+".batch"))
			if err != nil {
				t.Fatal(err)
			}
			h, err := Validate(b, 1<<20)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if h.Codec() != codec || h.BaseOffset != 100 || h.NumRecords != 50 || h.FirstTimestamp != 1700000000000 ||
				h.MaxTimestamp != 1700000000000+49*3 {
				t.Fatalf("header %+v", h)
			}
			i := 0
			err = Records(b, 1<<20, func(r Record) error {
				wantKey := []byte(fmt.Sprintf("key-%d", i))
				if i%7 == 0 {
					wantKey = nil
				}
				wantValue := fmt.Sprintf("value-%d%s", i, strings.Repeat("-", i*20))
				if r.Timestamp(h) != 1700000000000+int64(i*3) || !bytes.Equal(r.Key, wantKey) || (r.Key == nil) != (wantKey == nil) ||
					string(r.Value) != wantValue || int(r.OffsetDelta) != i {
					return fmt.Errorf("record %d: ts %d key %q value %q", i, r.Timestamp(h), r.Key, r.Value)
				}
				if i%5 == 0 {
					if len(r.Headers) != 1 || r.Headers[0].Key != fmt.Sprintf("h%d", i) || string(r.Headers[0].Value) != fmt.Sprintf("hv%d", i) {
						return fmt.Errorf("record %d headers %+v", i, r.Headers)
					}
				} else if len(r.Headers) != 0 {
					return fmt.Errorf("record %d headers %+v", i, r.Headers)
				}
				i++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// Re-encoding the records with our encoder yields a batch the same
			// decoder accepts, for the same codec.
			var rs []Record
			_ = Records(b, 1<<20, func(r Record) error {
				c := r
				c.Headers = append([]RecordHeader(nil), r.Headers...)
				rs = append(rs, c)
				return nil
			})
			again, err := Encode(BatchSpec{BaseOffset: 100, Codec: codec, FirstTimestamp: h.FirstTimestamp, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, rs)
			if err != nil {
				t.Fatal(err)
			}
			if codec == CodecNone && !bytes.Equal(again[HeaderSize:], b[HeaderSize:]) {
				t.Fatal("uncompressed records encode differently from the Java client")
			}
			if _, err := Validate(again, 1<<20); err != nil {
				t.Fatal(err)
			}
		})
	}
}
