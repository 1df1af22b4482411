package partition

import (
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/record"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func testConfig() Config {
	lc := log.DefaultConfig()
	lc.SegmentBytes = 4096
	return Config{Log: lc, MaxMessageBytes: 1 << 20, TimestampBeforeMaxMs: -1, TimestampAfterMaxMs: -1, MinInsyncReplicas: 1}
}

// openPartition opens (or reopens) partition t-0 under dir.
func openPartition(t *testing.T, dir string, cfg Config) (*Partition, *log.Dir) {
	t.Helper()
	opts := log.Options{Now: func() time.Time { return testNow }, Logger: quiet}
	d, err := log.OpenDir(dir, opts, func(string, int32) log.Config { return cfg.Log })
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Create("t", 0, cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(l, [16]byte{1}, cfg, Options{Now: func() time.Time { return testNow }, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	p.SetLeadership(1, 3, []int32{1}, []int32{1})
	return p, d
}

type batchOpt func(*record.BatchSpec)

func producer(id int64, epoch int16, seq int32) batchOpt {
	return func(s *record.BatchSpec) { s.ProducerID, s.ProducerEpoch, s.BaseSequence = id, epoch, seq }
}

func batch(t *testing.T, n int, opts ...batchOpt) []byte {
	t.Helper()
	spec := record.BatchSpec{FirstTimestamp: testNow.UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	for _, o := range opts {
		o(&spec)
	}
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Key: []byte{byte(i)}, Value: []byte("value")}
	}
	b, err := record.Encode(spec, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendRead(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	for i := 0; i < 10; i++ {
		res, err := p.Append(batch(t, 3))
		if err != nil {
			t.Fatal(err)
		}
		if res.BaseOffset != int64(i*3) || res.LastOffset != int64(i*3+2) {
			t.Fatalf("append %d: offsets %d..%d", i, res.BaseOffset, res.LastOffset)
		}
	}
	off := p.Offsets()
	if off.HighWatermark != 30 || off.LogEndOffset != 30 || off.LogStartOffset != 0 {
		t.Fatalf("offsets %+v", off)
	}
	res, err := p.Read(4, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	h, err := record.ParseHeader(res.Records)
	if err != nil || h.BaseOffset != 3 || h.PartitionLeaderEpoch != 3 {
		t.Fatalf("first batch %+v, %v", h, err)
	}
	if _, err := p.Read(31, 100, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read past the end: %v", err)
	}
	if res, err := p.Read(30, 100, true); err != nil || len(res.Records) != 0 {
		t.Fatalf("read at the end: %d bytes, %v", len(res.Records), err)
	}
}

func TestHighWatermarkWakesWaiters(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	ch := p.HighWatermarkChanged()
	select {
	case <-ch:
		t.Fatal("fired before any append")
	default:
	}
	if _, err := p.Append(batch(t, 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("append did not wake the waiter")
	}
}

func TestValidation(t *testing.T) {
	cfg := testConfig()
	cfg.MaxMessageBytes = 2000
	p, d := openPartition(t, t.TempDir(), cfg)
	defer d.Close()

	badCRC := batch(t, 2)
	badCRC[len(badCRC)-1] ^= 0xff
	badCount := batch(t, 2)
	binary.BigEndian.PutUint32(badCount[57:], 3)
	resealCRC(badCount)
	control := batch(t, 1, func(s *record.BatchSpec) { s.Control = true })
	magic1 := batch(t, 1)
	magic1[16] = 1
	twoIdempotent := append(batch(t, 1, producer(7, 0, 0)), batch(t, 1, producer(7, 0, 1))...)
	torn := batch(t, 2)
	torn = torn[:len(torn)-4]
	nullKey, err := record.Encode(record.BatchSpec{FirstTimestamp: testNow.UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]record.Record{{Value: []byte("no key")}})
	if err != nil {
		t.Fatal(err)
	}
	future := batch(t, 1, func(s *record.BatchSpec) { s.FirstTimestamp = testNow.Add(2 * time.Hour).UnixMilli() })

	for _, tc := range []struct {
		name    string
		records []byte
		cfg     func(*Config)
		want    error
	}{
		{"empty", nil, nil, ErrCorruptMessage},
		{"crc mismatch", badCRC, nil, ErrCorruptMessage},
		{"record count", badCount, nil, ErrCorruptMessage},
		{"torn batch", torn, nil, ErrCorruptMessage},
		{"trailing garbage", append(batch(t, 1), 1, 2, 3), nil, ErrCorruptMessage},
		{"too large", batch(t, 200), nil, ErrMessageTooLarge},
		{"control batch from a client", control, nil, ErrInvalidRecord},
		{"magic 1", magic1, nil, ErrUnsupportedForMagic},
		{"two idempotent batches", twoIdempotent, nil, ErrInvalidRecord},
		{"null key in a compacted topic", nullKey, func(c *Config) { c.Log.Compact = true }, ErrInvalidRecord},
		{"timestamp too far ahead", future, func(c *Config) { c.TimestampAfterMaxMs = 3600000 }, ErrInvalidTimestamp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				tc.cfg(&c)
			}
			p.SetConfig(c)
			defer p.SetConfig(cfg)
			before := p.Offsets().LogEndOffset
			if _, err := p.Append(tc.records); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if after := p.Offsets().LogEndOffset; after != before {
				t.Fatalf("a rejected append moved the log end offset %d -> %d", before, after)
			}
		})
	}
}

// resealCRC recomputes a batch's CRC after a test edits covered bytes.
func resealCRC(b []byte) {
	binary.BigEndian.PutUint32(b[17:], record.Checksum(b[21:]))
}

func TestLogAppendTime(t *testing.T) {
	cfg := testConfig()
	cfg.LogAppendTime = true
	p, d := openPartition(t, t.TempDir(), cfg)
	defer d.Close()
	res, err := p.Append(batch(t, 2, func(s *record.BatchSpec) { s.FirstTimestamp = 5 }))
	if err != nil {
		t.Fatal(err)
	}
	if res.LogAppendTime != testNow.UnixMilli() {
		t.Fatalf("log append time %d", res.LogAppendTime)
	}
	rd, err := p.Read(0, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	h, err := record.Validate(rd.Records, 1<<20)
	if err != nil {
		t.Fatalf("stamped batch no longer validates: %v", err)
	}
	if !h.LogAppendTime() || h.MaxTimestamp != testNow.UnixMilli() {
		t.Fatalf("header %+v", h)
	}
}

func TestIdempotentSequences(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	steps := []struct {
		name      string
		records   []byte
		want      error
		wantBase  int64
		duplicate bool
	}{
		{"first batch", batch(t, 2, producer(7, 0, 0)), nil, 0, false},
		{"next batch", batch(t, 3, producer(7, 0, 2)), nil, 2, false},
		{"duplicate of the first", batch(t, 2, producer(7, 0, 0)), nil, 0, true},
		{"duplicate of the last", batch(t, 3, producer(7, 0, 2)), nil, 2, true},
		{"gap", batch(t, 1, producer(7, 0, 9)), ErrOutOfOrderSequence, 0, false},
		{"another producer", batch(t, 1, producer(8, 0, 0)), nil, 5, false},
		{"in order again", batch(t, 1, producer(7, 0, 5)), nil, 6, false},
		{"new epoch must start at 0", batch(t, 1, producer(7, 1, 6)), ErrOutOfOrderSequence, 0, false},
		{"new epoch", batch(t, 1, producer(7, 1, 0)), nil, 7, false},
		{"fenced old epoch", batch(t, 1, producer(7, 0, 6)), ErrInvalidProducerEpoch, 0, false},
		{"unknown producer may start anywhere", batch(t, 1, producer(9, 0, 42)), nil, 8, false},
	}
	for _, s := range steps {
		res, err := p.Append(s.records)
		if !errors.Is(err, s.want) {
			t.Fatalf("%s: err = %v, want %v", s.name, err, s.want)
		}
		if err != nil {
			continue
		}
		if res.BaseOffset != s.wantBase || res.Duplicate != s.duplicate {
			t.Fatalf("%s: base %d duplicate %v, want %d %v", s.name, res.BaseOffset, res.Duplicate, s.wantBase, s.duplicate)
		}
	}
	if leo := p.Offsets().LogEndOffset; leo != 9 {
		t.Fatalf("log end offset %d, want 9 (duplicates must not be written)", leo)
	}
}

func TestDuplicateOnlyWithinLastFive(t *testing.T) {
	p, d := openPartition(t, t.TempDir(), testConfig())
	defer d.Close()
	for seq := int32(0); seq < 6; seq++ {
		if _, err := p.Append(batch(t, 1, producer(3, 0, seq))); err != nil {
			t.Fatal(err)
		}
	}
	// Sequence 0 has left the five-batch window: it is no duplicate but out of order.
	if _, err := p.Append(batch(t, 1, producer(3, 0, 0))); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("err = %v", err)
	}
	if res, err := p.Append(batch(t, 1, producer(3, 0, 1))); err != nil || !res.Duplicate || res.BaseOffset != 1 {
		t.Fatalf("seq 1: %+v %v", res, err)
	}
}

func TestProducerStateSurvivesRestart(t *testing.T) {
	for _, clean := range []bool{true, false} {
		name := "unclean"
		if clean {
			name = "clean"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p, d := openPartition(t, dir, testConfig())
			for seq := int32(0); seq < 12; seq += 3 {
				if _, err := p.Append(batch(t, 3, producer(11, 2, seq))); err != nil {
					t.Fatal(err)
				}
			}
			if clean {
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				// A crash: no snapshot of the last appends, no clean-shutdown
				// marker; the log files are all that is left.
				if err := p.Sync(); err != nil {
					t.Fatal(err)
				}
				offs, err := listSnapshots(vfs.Default, filepath.Join(dir, "t-0"))
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range offs {
					os.Remove(filepath.Join(dir, "t-0", snapshotName(f)))
				}
			}
			p2, d2 := openPartition(t, dir, testConfig())
			defer d2.Close()
			res, err := p2.Append(batch(t, 3, producer(11, 2, 9)))
			if err != nil || !res.Duplicate || res.BaseOffset != 9 {
				t.Fatalf("retry after restart: %+v %v", res, err)
			}
			if _, err := p2.Append(batch(t, 1, producer(11, 2, 13))); !errors.Is(err, ErrOutOfOrderSequence) {
				t.Fatalf("gap after restart: %v", err)
			}
			if _, err := p2.Append(batch(t, 1, producer(11, 1, 0))); !errors.Is(err, ErrInvalidProducerEpoch) {
				t.Fatalf("old epoch after restart: %v", err)
			}
			if res, err := p2.Append(batch(t, 1, producer(11, 2, 12))); err != nil || res.BaseOffset != 12 {
				t.Fatalf("next after restart: %+v %v", res, err)
			}
		})
	}
}

func TestSnapshotFormat(t *testing.T) {
	s := newProducerState()
	for _, h := range []record.Header{
		{ProducerID: 1, ProducerEpoch: 0, BaseSequence: 0, LastOffsetDelta: 4, BaseOffset: 10, MaxTimestamp: 99},
		{ProducerID: 2, ProducerEpoch: 5, BaseSequence: 7, LastOffsetDelta: 0, BaseOffset: 15, MaxTimestamp: 100},
	} {
		s.update(h)
	}
	b := s.marshal()
	if len(b) != snapshotHeader+2*snapshotEntrySize {
		t.Fatalf("size %d", len(b))
	}
	back, err := unmarshalProducerState(b)
	if err != nil {
		t.Fatal(err)
	}
	e := back.producers[1]
	if e == nil || e.epoch != 0 || len(e.batches) != 1 || e.batches[0] != (batchMeta{0, 4, 10, 14, 99}) {
		t.Fatalf("producer 1: %+v", e)
	}
	b[len(b)-1] ^= 1
	if _, err := unmarshalProducerState(b); !errors.Is(err, errSnapshotCorrupt) {
		t.Fatalf("flipped byte: %v", err)
	}
	if _, err := unmarshalProducerState(b[:5]); !errors.Is(err, errSnapshotCorrupt) {
		t.Fatalf("short: %v", err)
	}
}

func FuzzProducerSnapshot(f *testing.F) {
	s := newProducerState()
	s.update(record.Header{ProducerID: 1, BaseSequence: 0, LastOffsetDelta: 2, BaseOffset: 4})
	f.Add(s.marshal())
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := unmarshalProducerState(b)
		if err == nil && len(st.marshal()) != len(b) {
			t.Fatalf("accepted %d bytes, re-encodes to %d", len(b), len(st.marshal()))
		}
	})
}
