package partition

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/record"
)

// at places a batch at a source offset and gives it a source leader epoch;
// neither is covered by the CRC.
func at(b []byte, base int64) []byte {
	record.SetBaseOffset(b, base)
	record.SetPartitionLeaderEpoch(b, 41)
	return b
}

func marker(t *testing.T, base int64, m TxnMarker) []byte {
	t.Helper()
	b, err := EncodeControlBatch(m, testNow.UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	return at(b, base)
}

func concat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// TestAppendAtKeepsSourceOffsets copies a source log that starts at 10, has
// a compaction gap and holds an aborted transaction: offsets, producer
// state and the abort index match the source, the leader epoch is ours.
func TestAppendAtKeepsSourceOffsets(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	steps := []struct {
		name     string
		records  []byte
		wantBase int64
		wantLast int64
		wantErr  error
		wantLSO  int64
	}{
		{"empty log starts at the first batch", at(batch(t, 3), 10), 10, 12, nil, 13},
		{"gap kept", at(batch(t, 2), 20), 20, 21, nil, 22},
		{"below the log end", at(batch(t, 1), 21), 0, 0, ErrOffsetOutOfRange, 22},
		{"second batch out of order appends nothing", concat(at(batch(t, 1), 30), at(batch(t, 1), 30)), 0, 0, ErrOffsetOutOfRange, 22},
		{"open transaction holds the LSO", at(batch(t, 2, producer(7, 0, 0), transactional()), 30), 30, 31, nil, 30},
		{"plain batch after it", at(batch(t, 1), 32), 32, 32, nil, 30},
		{"abort marker", marker(t, 33, TxnMarker{ProducerID: 7, ProducerEpoch: 0, CoordinatorEpoch: 2}), 33, 33, nil, 34},
		{"idempotent batch with any sequence", at(batch(t, 2, producer(8, 0, 100)), 40), 40, 41, nil, 42},
	}
	for _, s := range steps {
		res, err := p.AppendAt(s.records)
		if s.wantErr != nil {
			if !errors.Is(err, s.wantErr) {
				t.Fatalf("%s: err = %v, want %v", s.name, err, s.wantErr)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		} else if res.BaseOffset != s.wantBase || res.LastOffset != s.wantLast {
			t.Fatalf("%s: offsets %d-%d, want %d-%d", s.name, res.BaseOffset, res.LastOffset, s.wantBase, s.wantLast)
		}
		if lso := p.Offsets().LastStableOffset; lso != s.wantLSO {
			t.Fatalf("%s: LSO = %d, want %d", s.name, lso, s.wantLSO)
		}
	}
	off := p.Offsets()
	if off.LogStartOffset != 10 || off.LogEndOffset != 42 || off.HighWatermark != 42 {
		t.Fatalf("offsets = %+v, want log start 10, end and HW 42", off)
	}
	res, err := p.Read(10, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	it := record.Batches(res.Records)
	for it.Next() {
		h := it.Header()
		bases = append(bases, h.BaseOffset)
		if h.PartitionLeaderEpoch != 3 {
			t.Fatalf("batch at %d has leader epoch %d, want this partition's 3", h.BaseOffset, h.PartitionLeaderEpoch)
		}
		if h.FirstTimestamp != testNow.UnixMilli() || record.Checksum(it.Batch()) != h.CRC {
			t.Fatalf("batch at %d changed: timestamp %d, crc ok %v", h.BaseOffset, h.FirstTimestamp, record.Checksum(it.Batch()) == h.CRC)
		}
	}
	if want := []int64{10, 20, 30, 32, 33, 40}; !reflect.DeepEqual(bases, want) {
		t.Fatalf("batches at %v, want %v", bases, want)
	}
	rc, err := p.ReadCommitted(30, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []log.AbortedTxn{{ProducerID: 7, FirstOffset: 30, LastOffset: 33, LastStableOffset: 34}}; !reflect.DeepEqual(rc.Aborted, want) {
		t.Fatalf("aborted = %+v, want %+v", rc.Aborted, want)
	}
	// Producer 8 continues from the copied sequence once the topic is
	// promoted and written by ordinary produce.
	if _, err := p.Append(batch(t, 1, producer(8, 0, 102))); err != nil {
		t.Fatalf("produce after the copied idempotent batch: %v", err)
	}
}

func TestAppendAtRefusesBadInput(t *testing.T) {
	good := at(batch(t, 1), 0)
	corrupt := at(batch(t, 1), 0)
	corrupt[len(corrupt)-1] ^= 0xff
	v1 := at(batch(t, 1), 0)
	v1[16] = 1 // magic
	cases := []struct {
		name    string
		records []byte
		want    error
	}{
		{"empty", nil, ErrCorruptMessage},
		{"crc mismatch", corrupt, ErrCorruptMessage},
		{"partial batch", good[:len(good)-3], ErrCorruptMessage},
		{"trailing bytes", append(append([]byte{}, good...), 0, 0), ErrCorruptMessage},
		{"old magic", v1, ErrUnsupportedForMagic},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, d := openPartition(t, t.TempDir(), testConfig())
			defer d.Close()
			if _, err := p.AppendAt(c.records); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if leo := p.Offsets().LogEndOffset; leo != 0 {
				t.Fatalf("log end %d after a refused append", leo)
			}
		})
	}
}
