package partition

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/record"
)

// produceCase is one kind of produced batch for BenchmarkAppendProduce.
type produceCase struct {
	name       string
	codec      record.Codec
	idempotent bool
	compact    bool
	placement  bool
}

// produceCases cover what the produce path does differently per batch:
// compression (streamed or decoded), producer state, the compacted topic's
// key check and the placement check that needs the records themselves.
var produceCases = []produceCase{
	{name: "plain/none"},
	{name: "plain/lz4", codec: record.CodecLZ4},
	{name: "plain/zstd", codec: record.CodecZstd},
	{name: "idempotent/none", idempotent: true},
	{name: "idempotent/zstd", codec: record.CodecZstd, idempotent: true},
	{name: "compacted/none", compact: true},
	{name: "compacted/lz4", codec: record.CodecLZ4, compact: true},
	{name: "compacted/zstd", codec: record.CodecZstd, compact: true},
	{name: "compacted+placement/none", compact: true, placement: true},
	{name: "compacted+placement/lz4", codec: record.CodecLZ4, compact: true, placement: true},
	{name: "compacted+placement/zstd", codec: record.CodecZstd, compact: true, placement: true},
}

// produceBatch is a 100-record batch of keyed records with 100-byte values
// that compress as log lines do.
func produceBatch(tb testing.TB, c produceCase) []byte {
	tb.Helper()
	spec := record.BatchSpec{Codec: c.codec, FirstTimestamp: testNow.UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	if c.idempotent {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = 7, 0, 0
	}
	recs := make([]record.Record, 100)
	for i := range recs {
		v := fmt.Sprintf("2026-12-02T05:00:%02d.%03dZ INFO request served path=/orders/%06d status=200 bytes=%d", i%60, i, i*7919, 1000+i)
		for len(v) < 100 {
			v += "."
		}
		recs[i] = record.Record{Key: []byte(fmt.Sprintf("key-%04d", i)), Value: []byte(v[:100]),
			Headers: []record.RecordHeader{{Key: "trace", Value: []byte("0af7651916cd43dd")}}}
	}
	b, err := record.Encode(spec, recs)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// setSequence rewrites an idempotent batch's base sequence and its CRC.
func setSequence(b []byte, seq int32) {
	binary.BigEndian.PutUint32(b[53:], uint32(seq))
	binary.BigEndian.PutUint32(b[17:], record.Checksum(b))
}

// produceChecks are the per-request record checks the produce handler runs
// before the append.
type produceChecks struct {
	produced  extension.Produced
	placement extension.Placement
}

// BenchmarkAppendProduce measures what the Kafka produce handler does with
// one partition's batch below the wire: the placement check when the topic
// asks for one (decoding the records, the built-in partitioner), then the
// fenced append (validation, the compacted topic's key check, producer
// state, the log append). Idempotent batches get a fresh sequence each
// iteration, which costs a CRC in the loop in every case alike.
func BenchmarkAppendProduce(b *testing.B) {
	for _, c := range produceCases {
		b.Run(c.name, func(b *testing.B) {
			t := &testing.T{}
			cfg := testConfig()
			cfg.Log.SegmentBytes = 1 << 30
			cfg.Log.Compact = c.compact
			p, d := openPartition(t, b.TempDir(), cfg)
			defer d.Close()
			src := produceBatch(b, c)
			buf := make([]byte, len(src))
			var checks produceChecks
			checks.produced.MaxDecompressed = 100 << 20
			epoch, err := p.Admit()
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				copy(buf, src)
				if c.idempotent {
					setSequence(buf, int32(i*100))
				}
				if err := produceOnce(p, epoch, buf, c.placement, &checks); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// produceOnce is the handler's work for one partition: one checking pass
// outside the partition's lock, which decodes the records for the
// placement check when there is one, then the append.
func produceOnce(p *Partition, epoch int32, records []byte, placement bool, c *produceChecks) error {
	var v RecordVisitor
	if placement {
		c.produced.Reset()
		v = &c.produced
	}
	checked, err := p.Check(records, v, c.produced.MaxDecompressed)
	if err != nil {
		return err
	}
	if placement {
		if err := c.placement.CheckDecoded(extension.Murmur2(), &c.produced, 0, 1); err != nil {
			return err
		}
	}
	_, err = p.AppendCheckedInEpoch(epoch, checked, false)
	return err
}
