package partition

import (
	"errors"
	"testing"

	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/record"
)

// Checking a compressed batch for a compacted topic, with its records
// handed to the placement check, and appending it decompresses it once.
func TestCheckDecompressesOnce(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			cfg := testConfig()
			cfg.Log.Compact = true
			p, d := openPartition(t, t.TempDir(), cfg)
			defer d.Close()
			epoch, err := p.Admit()
			if err != nil {
				t.Fatal(err)
			}
			c := produceCase{codec: codec, compact: true, placement: true}
			var checks produceChecks
			checks.produced.MaxDecompressed = 1 << 20
			before := record.Decompressions()
			if err := produceOnce(p, epoch, produceBatch(t, c), true, &checks); err != nil {
				t.Fatal(err)
			}
			if got := record.Decompressions() - before; got != 1 {
				t.Errorf("decompressed %d times, want once", got)
			}
			if n := len(checks.produced.Records); n != 100 {
				t.Errorf("the placement check saw %d records, want 100", n)
			}
			if got := p.Offsets().LogEndOffset; got != 100 {
				t.Errorf("log end offset %d, want 100", got)
			}
		})
	}
}

// The records a visitor sees are those Produced.Decode reads, batch by
// batch, in a record set of several batches.
func TestCheckVisitorMatchesDecode(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	var set []byte
	for _, c := range []produceCase{{codec: record.CodecLZ4}, {}, {codec: record.CodecZstd}} {
		set = append(set, produceBatch(t, c)...)
	}
	var visited, decoded extension.Produced
	visited.Reset()
	if _, err := p.Check(set, &visited, 1<<20); err != nil {
		t.Fatal(err)
	}
	decoded.MaxDecompressed = 1 << 20
	if err := decoded.Decode(set); err != nil {
		t.Fatal(err)
	}
	if len(visited.Batches) != 3 || len(visited.Records) != 300 {
		t.Fatalf("visited %d batches, %d records", len(visited.Batches), len(visited.Records))
	}
	for i, b := range visited.Batches {
		if b != decoded.Batches[i] {
			t.Errorf("batch %d: visited %+v, decoded %+v", i, b, decoded.Batches[i])
		}
	}
	for i, r := range visited.Records {
		w := decoded.Records[i]
		if string(r.Key) != string(w.Key) || string(r.Value) != string(w.Value) || r.Timestamp != w.Timestamp ||
			r.OffsetDelta != w.OffsetDelta || len(r.Headers) != 1 || string(r.Headers[0].Value) != string(w.Headers[0].Value) {
			t.Fatalf("record %d: visited %+v, decoded %+v", i, r, w)
		}
	}
}

// A record set checked before the topic became compacted is checked again
// against the new config when it is appended.
func TestAppendCheckedRechecksAfterConfigChange(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	b := batch(t, 2)
	spec := record.BatchSpec{FirstTimestamp: testNow.UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	keyless, err := record.Encode(spec, []record.Record{{Value: []byte("no key")}})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := p.Check(b, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := p.Check(keyless, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Log.Compact = true
	p.SetConfig(cfg)
	if _, err := p.AppendChecked(stale); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("keyless batch appended to a compacted topic: %v", err)
	}
	if _, err := p.AppendChecked(ok); err != nil {
		t.Fatalf("keyed batch: %v", err)
	}
	if _, err := p.AppendChecked(Checked{}); !errors.Is(err, ErrCorruptMessage) {
		t.Fatalf("zero Checked: %v", err)
	}
}

// Check answers with the error classes the append path always had, which
// the protocol edge turns into Kafka's codes.
func TestCheckErrors(t *testing.T) {
	cfg := testConfig()
	cfg.Log.Compact = true
	cfg.MaxMessageBytes = 1 << 16
	p, d := openPartition(t, t.TempDir(), cfg)
	defer d.Close()
	spec := record.BatchSpec{Codec: record.CodecLZ4, FirstTimestamp: testNow.UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	keyless, err := record.Encode(spec, []record.Record{{Key: []byte("k"), Value: []byte("v")}, {Value: []byte("no key")}})
	if err != nil {
		t.Fatal(err)
	}
	spec.Codec = record.CodecNone
	large, err := record.Encode(spec, []record.Record{{Key: []byte("k"), Value: make([]byte, 1<<17)}})
	if err != nil {
		t.Fatal(err)
	}
	badCRC := batch(t, 2)
	badCRC[len(badCRC)-1] ^= 1
	magic1 := batch(t, 1)
	magic1[16] = 1
	control := batch(t, 1)
	control[22] |= 0x20
	control = reseal(control)
	for _, tc := range []struct {
		name    string
		records []byte
		want    error
	}{
		{"empty", nil, ErrCorruptMessage},
		{"short", batch(t, 1)[:40], ErrCorruptMessage},
		{"crc", badCRC, ErrCorruptMessage},
		{"magic", magic1, ErrUnsupportedForMagic},
		{"null key on a compacted topic", keyless, ErrInvalidRecord},
		{"over max.message.bytes", large, ErrMessageTooLarge},
		{"control batch", control, ErrInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []RecordVisitor{nil, new(extension.Produced)} {
				if _, err := p.Check(tc.records, v, 1<<20); !errors.Is(err, tc.want) {
					t.Errorf("visitor %v: got %v, want %v", v != nil, err, tc.want)
				}
			}
		})
	}
}

// reseal recomputes a batch's CRC after its attributes changed.
func reseal(b []byte) []byte {
	crc := record.Checksum(b)
	b[17], b[18], b[19], b[20] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	return b
}
