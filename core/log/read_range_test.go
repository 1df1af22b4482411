//go:build linux

package log

import (
	"bytes"
	"syscall"
	"testing"

	"github.com/gregorbroker/gregor/core/record"
)

// pread reads a range through its own descriptor.
func pread(t *testing.T, r FileRange) []byte {
	t.Helper()
	b := make([]byte, r.Len)
	n, err := syscall.Pread(r.FD, b, r.Pos)
	if err != nil || n != r.Len {
		t.Fatalf("pread range fd %d at %d: %d of %d bytes, %v", r.FD, r.Pos, n, r.Len, err)
	}
	return b
}

// TestReadRangeMatchesRead: for every start offset, limit and bound, the
// range holds exactly the bytes Read returns.
func TestReadRangeMatchesRead(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	fill(t, l, 20, 3)
	leo := l.LogEndOffset()
	for from := int64(0); from < leo; from++ {
		for _, maxBytes := range []int{0, 1, 100, 250, 1 << 20} {
			for _, bound := range []int64{leo, leo - 3, from + 1} {
				for _, minOne := range []bool{false, true} {
					want, werr := l.Read(from, maxBytes, bound, minOne)
					r, ok, err := l.ReadRange(from, maxBytes, bound, minOne)
					if !ok {
						t.Fatalf("ReadRange(%d, %d, %d, %v) declined on the OS file system", from, maxBytes, bound, minOne)
					}
					if (err != nil) != (werr != nil) {
						t.Fatalf("ReadRange(%d, %d, %d, %v): err %v, Read err %v", from, maxBytes, bound, minOne, err, werr)
					}
					if r.Len != len(want) {
						t.Fatalf("ReadRange(%d, %d, %d, %v): %d bytes, Read %d", from, maxBytes, bound, minOne, r.Len, len(want))
					}
					if r.Len > 0 {
						if got := pread(t, r); !bytes.Equal(got, want) {
							t.Fatalf("ReadRange(%d, %d, %d, %v): bytes differ from Read", from, maxBytes, bound, minOne)
						}
						var last int64
						for _, h := range headersOf(t, want) {
							last = h.NextOffset()
						}
						if r.NextOffset != last {
							t.Fatalf("NextOffset %d, want %d", r.NextOffset, last)
						}
					}
					r.Close()
				}
			}
		}
	}
	if n := openRanges.Load(); n != 0 {
		t.Fatalf("%d ranges left open", n)
	}
}

// TestReadRangeOutlivesSegment: a range read before retention deletes its
// segment and the log closes still reads the batches it was given.
func TestReadRangeOutlivesSegment(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	fill(t, l, 20, 3)
	want, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := l.ReadRange(0, 1<<20, l.LogEndOffset(), true)
	if !ok || err != nil || r.Len == 0 {
		t.Fatalf("ReadRange: ok %v, err %v, len %d", ok, err, r.Len)
	}
	defer r.Close()
	if err := l.DeleteRecordsBefore(l.LogEndOffset() - 1); err != nil {
		t.Fatal(err)
	}
	e.dir.closeLogs()
	e.dir = nil
	if got := pread(t, r); !bytes.Equal(got, want) {
		t.Fatal("the range's bytes changed when their segment was deleted")
	}
}

// TestReadRangeBounded: past MaxOpenRanges, ReadRange declines instead of
// taking more descriptors.
func TestReadRangeBounded(t *testing.T) {
	e := newEnv(t, tinyConfig())
	l := e.log("t", 0)
	fill(t, l, 4, 1)
	defer func(n int64) { MaxOpenRanges = n }(MaxOpenRanges)
	MaxOpenRanges = 2
	var held []FileRange
	for i := 0; i < 2; i++ {
		r, ok, err := l.ReadRange(0, 1<<20, l.LogEndOffset(), true)
		if !ok || err != nil {
			t.Fatalf("range %d: ok %v err %v", i, ok, err)
		}
		held = append(held, r)
	}
	if _, ok, _ := l.ReadRange(0, 1<<20, l.LogEndOffset(), true); ok {
		t.Fatal("a third range was given past MaxOpenRanges = 2")
	}
	held[0].Close()
	r, ok, _ := l.ReadRange(0, 1<<20, l.LogEndOffset(), true)
	if !ok {
		t.Fatal("no range after one was released")
	}
	r.Close()
	held[1].Close()
}

func headersOf(t *testing.T, b []byte) []record.Header {
	t.Helper()
	var hs []record.Header
	it := record.Batches(b)
	for it.Next() {
		hs = append(hs, it.Header())
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	return hs
}
