package log

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestIndexFilesMatchKafka checks the bytes of .index and .timeindex against
// entries worked out by hand from Kafka's LogSegment rules.
func TestIndexFilesMatchKafka(t *testing.T) {
	cfg := DefaultConfig()
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	size := int64(len(makeBatch(t, batchSpec{records: 2, ts: 1})))
	cfg.IndexIntervalBytes = int32(size + size/2) // an entry every second batch
	l.SetConfig(cfg)
	// Batch i holds offsets 2i, 2i+1; its max timestamp is ts+1.
	tss := []int64{100, 300, 200, 400, 400, 350, 500}
	for _, ts := range tss {
		mustAppend(t, l, makeBatch(t, batchSpec{records: 2, ts: ts, tsStep: 1}))
	}
	e.reopen()

	be := binary.BigEndian
	var wantOff, wantTime []byte
	// Entries go to batches 2, 4 and 6: more than 1.5 batches since the last.
	for _, i := range []int64{2, 4, 6} {
		wantOff = be.AppendUint32(wantOff, uint32(2*i+1))
		wantOff = be.AppendUint32(wantOff, uint32(i*size))
	}
	// Time entries carry the largest timestamp so far and the last offset of
	// the batch that set it: after batch 2 that is batch 1 (301), after batch
	// 4 batch 3 (401, not repeated by batch 4's equal 401), after batch 6 it
	// is batch 6 (501). Closing adds nothing newer.
	for _, te := range [][2]int64{{301, 3}, {401, 7}, {501, 13}} {
		wantTime = be.AppendUint64(wantTime, uint64(te[0]))
		wantTime = be.AppendUint32(wantTime, uint32(te[1]))
	}
	dir := filepath.Join(e.path, "t-0")
	gotOff, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.index"))
	if err != nil {
		t.Fatal(err)
	}
	gotTime, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.timeindex"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotOff, wantOff) {
		t.Fatalf(".index = %x\nwant     %x", gotOff, wantOff)
	}
	if !bytes.Equal(gotTime, wantTime) {
		t.Fatalf(".timeindex = %x\nwant         %x", gotTime, wantTime)
	}
	if w := e.warns.take(); len(w) != 0 {
		t.Fatalf("clean reopen warned: %v", w)
	}
}

// TestRolledSegmentGetsFinalTimeEntry checks Kafka's roll rule: the time index
// of a finished segment ends with its largest timestamp.
func TestRolledSegmentGetsFinalTimeEntry(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IndexIntervalBytes = 1 << 20 // no interval entries
	cfg.SegmentMs = 1000
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	mustAppend(t, l, makeBatch(t, batchSpec{records: 3, ts: 5000, tsStep: 7}))
	mustAppend(t, l, makeBatch(t, batchSpec{ts: 7000})) // rolls: 2s after the first
	ti, err := os.ReadFile(filepath.Join(e.path, "t-0", "00000000000000000000.timeindex"))
	if err != nil {
		t.Fatal(err)
	}
	want := binary.BigEndian.AppendUint64(nil, 5014)
	want = binary.BigEndian.AppendUint32(want, 2)
	if !bytes.Equal(ti, want) {
		t.Fatalf("rolled .timeindex = %x, want %x", ti, want)
	}
	if n := fileSize(t, filepath.Join(e.path, "t-0", "00000000000000000000.index")); n != 0 {
		t.Fatalf("rolled .index has %d bytes; indexes are not preallocated", n)
	}
}

func TestIndexLookups(t *testing.T) {
	const base = 1000
	var off, tim []byte
	for _, e := range [][2]int64{{1004, 100}, {1010, 300}, {1020, 900}} {
		off = appendOffsetEntry(off, base, e[0], e[1])
	}
	for _, e := range [][2]int64{{50, 1004}, {70, 1010}, {90, 1020}} {
		tim = appendTimeEntry(tim, base, e[0], e[1])
	}
	offTests := []struct{ target, wantOff, wantPos int64 }{
		{999, base, 0}, {1000, base, 0}, {1003, base, 0}, {1004, 1004, 100},
		{1009, 1004, 100}, {1010, 1010, 300}, {5000, 1020, 900},
	}
	for _, tt := range offTests {
		if o, p := lookupOffset(off, base, tt.target); o != tt.wantOff || p != tt.wantPos {
			t.Errorf("lookupOffset(%d) = (%d, %d), want (%d, %d)", tt.target, o, p, tt.wantOff, tt.wantPos)
		}
	}
	timeTests := []struct{ ts, wantTS, wantOff int64 }{
		{10, -1, base}, {50, 50, 1004}, {69, 50, 1004}, {70, 70, 1010}, {1000, 90, 1020},
	}
	for _, tt := range timeTests {
		if ts, o := lookupTime(tim, base, tt.ts); ts != tt.wantTS || o != tt.wantOff {
			t.Errorf("lookupTime(%d) = (%d, %d), want (%d, %d)", tt.ts, ts, o, tt.wantTS, tt.wantOff)
		}
	}
}

func TestIndexChecks(t *testing.T) {
	const base = 100
	entry := func(pairs ...int64) []byte {
		var b []byte
		for i := 0; i < len(pairs); i += 2 {
			b = appendOffsetEntry(b, base, pairs[i], pairs[i+1])
		}
		return b
	}
	tentry := func(pairs ...int64) []byte {
		var b []byte
		for i := 0; i < len(pairs); i += 2 {
			b = appendTimeEntry(b, base, pairs[i], pairs[i+1])
		}
		return b
	}
	offTests := []struct {
		name string
		idx  []byte
		ok   bool
	}{
		{"empty", nil, true},
		{"good", entry(101, 10, 105, 80), true},
		{"partial entry", entry(101, 10)[:7], false},
		{"offset repeats", entry(101, 10, 101, 80), false},
		{"position goes back", entry(101, 80, 105, 10), false},
		{"offset past the end", entry(101, 10, 200, 80), false},
		{"position past the log", entry(101, 10, 105, 5000), false},
		{"offset below base", entry(50, 10), false},
	}
	for _, tt := range offTests {
		err := checkOffsetIndex(tt.idx, base, 150, 1000)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrCorrupt)) {
			t.Errorf("offset index %s: err = %v", tt.name, err)
		}
	}
	timeTests := []struct {
		name string
		idx  []byte
		ok   bool
	}{
		{"empty", nil, true},
		{"good", tentry(5, 101, 9, 120), true},
		{"partial entry", tentry(5, 101)[:11], false},
		{"time goes back", tentry(9, 101, 5, 120), false},
		{"offset goes back", tentry(5, 120, 9, 101), false},
		{"offset past the end", tentry(5, 101, 9, 150), false},
	}
	for _, tt := range timeTests {
		err := checkTimeIndex(tt.idx, base, 150)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrCorruptIndex)) {
			t.Errorf("time index %s: err = %v", tt.name, err)
		}
	}
}
