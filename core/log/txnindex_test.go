package log

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestAbortedTxnCodec(t *testing.T) {
	entries := []AbortedTxn{{ProducerID: 7, FirstOffset: 3, LastOffset: 9, LastStableOffset: 10}, {ProducerID: 1 << 40, FirstOffset: 0, LastOffset: 0, LastStableOffset: 1}}
	b := EncodeAbortedTxns(entries)
	if len(b) != 2*34 {
		t.Fatalf("encoded %d bytes, want 68", len(b))
	}
	// Kafka's layout: version 0, then the four int64 fields big-endian.
	if b[0] != 0 || b[1] != 0 || b[9] != 7 || b[17] != 3 || b[25] != 9 || b[33] != 10 {
		t.Fatalf("unexpected layout % x", b[:34])
	}
	got, err := DecodeAbortedTxns(b)
	if err != nil || !reflect.DeepEqual(got, entries) {
		t.Fatalf("decode = %v, %v", got, err)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		keep int
	}{
		{"torn tail", b[:50], 1},
		{"bad version", append(append([]byte{}, b[:34]...), append([]byte{0, 1}, b[36:]...)...), 1},
		{"first after last", EncodeAbortedTxns([]AbortedTxn{{ProducerID: 1, FirstOffset: 5, LastOffset: 4}}), 0},
		{"negative producer", EncodeAbortedTxns([]AbortedTxn{{ProducerID: -1, FirstOffset: 1, LastOffset: 4}}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeAbortedTxns(tc.b)
			if !errors.Is(err, ErrCorruptIndex) {
				t.Fatalf("err = %v, want ErrCorruptIndex", err)
			}
			if len(got) != tc.keep {
				t.Fatalf("kept %d entries, want %d", len(got), tc.keep)
			}
		})
	}
}

func TestAbortedTxnIndexLifecycle(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 400 // a few batches per segment
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	var offs []int64
	for i := 0; i < 12; i++ {
		offs = append(offs, mustAppend(t, l, makeBatch(t, batchSpec{ts: 1})))
	}
	if len(l.Segments()) < 3 {
		t.Fatalf("want several segments, got %d", len(l.Segments()))
	}
	a := AbortedTxn{ProducerID: 1, FirstOffset: 1, LastOffset: 2, LastStableOffset: 3}
	b := AbortedTxn{ProducerID: 2, FirstOffset: 3, LastOffset: 8, LastStableOffset: 9}
	c := AbortedTxn{ProducerID: 3, FirstOffset: 9, LastOffset: 10, LastStableOffset: 11}
	for _, x := range []AbortedTxn{a, b, c, b} { // b twice: the second is ignored
		if err := l.AppendAbortedTxn(x); err != nil {
			t.Fatalf("AppendAbortedTxn(%v): %v", x, err)
		}
	}
	if err := l.AppendAbortedTxn(AbortedTxn{ProducerID: 1, FirstOffset: 1, LastOffset: 99}); err == nil {
		t.Fatalf("a marker past the log end was accepted")
	}
	check := func(from, upTo int64, want ...AbortedTxn) {
		t.Helper()
		got := l.AbortedTxns(from, upTo)
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("AbortedTxns(%d, %d) = %v, want %v", from, upTo, got, want)
		}
	}
	check(0, 12, a, b, c)
	check(3, 12, b, c)
	check(0, 3, a) // b starts at 3: not below upTo
	check(8, 10, b, c)
	check(9, 10, c)
	check(11, 12)

	// The entries survive a clean restart and a crash, each in the file of
	// the segment that holds its marker.
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	l = e.log("t", 0)
	check(0, 12, a, b, c)
	holding := map[int64]bool{}
	for _, m := range []int64{a.LastOffset, b.LastOffset, c.LastOffset} {
		for _, si := range l.Segments() {
			if m >= si.BaseOffset && m < si.NextOffset {
				holding[si.BaseOffset] = true
			}
		}
	}
	files := segmentFiles(t, l.Path(), txnIndexSuffix)
	if len(files) != len(holding) || len(holding) < 2 {
		t.Fatalf("txn index files %v, want one per segment holding a marker", files)
	}
	e.crash()
	l = e.log("t", 0)
	check(0, 12, a, b, c)

	// Truncation drops entries whose marker is removed.
	if err := l.Truncate(9); err != nil {
		t.Fatal(err)
	}
	check(0, 12, a, b)
	if err := l.Truncate(5); err != nil {
		t.Fatal(err)
	}
	check(0, 12, a)
	e.reopen()
	l = e.log("t", 0)
	check(0, 12, a)
	_ = offs
}

func TestAbortedTxnIndexRepair(t *testing.T) {
	e := newEnv(t, DefaultConfig())
	l := e.log("t", 0)
	for i := 0; i < 4; i++ {
		mustAppend(t, l, makeBatch(t, batchSpec{ts: 1}))
	}
	a := AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 1, LastStableOffset: 2}
	if err := l.AppendAbortedTxn(a); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(l.Path(), segmentName(0, txnIndexSuffix))
	e.reopen()
	// A torn entry and one naming a marker beyond the log are dropped.
	b := append(EncodeAbortedTxns([]AbortedTxn{a, {ProducerID: 2, FirstOffset: 2, LastOffset: 50}}), 1, 2, 3)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	l = e.log("t", 0)
	if got := l.AbortedTxns(0, 10); !reflect.DeepEqual(got, []AbortedTxn{a}) {
		t.Fatalf("after repair %v", got)
	}
	if fileSize(t, path) != txnEntrySize {
		t.Fatalf("repaired file has %d bytes", fileSize(t, path))
	}
}
