package main

import (
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestBatchDecodesWithValidCRC(t *testing.T) {
	cases := []struct {
		name   string
		values []string
	}{
		{"one record", []string{"a"}},
		{"five records", []string{"a-0", "a-1", "a-2", "a-3", "a-4"}},
		{"empty value", []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := batch(c.values, 1700000000000, 1000)
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(b); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if got := crc32.Checksum(b[21:], castagnoli); uint32(rb.CRC) != got {
				t.Fatalf("crc %08x, computed %08x", uint32(rb.CRC), got)
			}
			if int(rb.NumRecords) != len(c.values) || int(rb.LastOffsetDelta) != len(c.values)-1 {
				t.Fatalf("records %d, last offset delta %d", rb.NumRecords, rb.LastOffsetDelta)
			}
			if int(rb.Length) != len(b)-12 {
				t.Fatalf("batch length %d, bytes after the length field %d", rb.Length, len(b)-12)
			}
			if rb.MaxTimestamp != rb.FirstTimestamp+int64(len(c.values)-1)*1000 {
				t.Fatalf("max timestamp %d", rb.MaxTimestamp)
			}
		})
	}
}
