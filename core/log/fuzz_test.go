package log

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/gregorbroker/gregor/core/log/vfs"
	"github.com/gregorbroker/gregor/core/record"
)

func quietOptions() Options {
	return Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// validSegment returns the bytes of a small segment of good batches.
func validSegment(t testing.TB, n int) []byte {
	var b []byte
	off := int64(0)
	for i := 0; i < n; i++ {
		batch := makeBatch(t, batchSpec{records: 1 + i%3, ts: int64(100 + i), epoch: int32(i / 3)})
		record.SetBaseOffset(batch, off)
		h, _ := record.ParseHeader(batch)
		off = h.NextOffset()
		b = append(b, batch...)
	}
	return b
}

// checkLog reads the whole log and checks every batch returned is whole and
// intact.
func checkLog(t *testing.T, l *Log) {
	leo := l.LogEndOffset()
	for from := l.LogStartOffset(); from < leo; {
		b, err := l.Read(from, 1<<16, leo, true)
		if err != nil {
			if errors.Is(err, ErrCorrupt) {
				return // damage below the recovery point is reported, not hidden
			}
			t.Fatalf("Read(%d): %v", from, err)
		}
		if len(b) == 0 {
			return
		}
		it := record.Batches(b)
		for it.Next() {
			from = it.Header().NextOffset()
		}
		if it.Err() != nil {
			t.Fatalf("Read(%d) returned broken batches: %v", from, it.Err())
		}
	}
	if _, err := l.Append(makeBatch(t, batchSpec{ts: 1})); err != nil {
		t.Fatalf("Append after open: %v", err)
	}
}

// FuzzRecoverSegment opens a partition whose only segment holds arbitrary
// bytes, as after a crash. Opening must never panic; recovery must leave only
// batches that pass their CRC.
func FuzzRecoverSegment(f *testing.F) {
	good := validSegment(f, 6)
	f.Add(good)
	f.Add(good[:len(good)-5])
	f.Add(append(append([]byte(nil), good...), "trailing garbage"...))
	f.Add([]byte{})
	f.Add([]byte("not a log at all"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "t-0")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, segmentName(0, logSuffix)), data, 0o644)
		d, err := OpenDir(root, quietOptions(), func(string, int32) Config { return tinyConfig() })
		if err != nil {
			return
		}
		defer d.closeLogs()
		l, ok := d.Log("t", 0)
		if !ok {
			t.Fatal("log missing")
		}
		for from := int64(0); from < l.LogEndOffset(); {
			b, err := l.Read(from, 1<<16, l.LogEndOffset(), true)
			if err != nil {
				t.Fatalf("Read(%d) after recovery: %v", from, err)
			}
			it := record.Batches(b)
			for it.Next() {
				if _, err := record.Validate(it.Batch(), 1<<20); err != nil && !errors.Is(err, record.ErrCorrupt) {
					t.Fatalf("recovered batch: %v", err)
				}
				if it.Header().CRC != record.Checksum(it.Batch()) {
					t.Fatalf("recovery kept a batch with a bad CRC at %d", it.Header().BaseOffset)
				}
				from = it.Header().NextOffset()
			}
			if it.Err() != nil || len(b) == 0 {
				t.Fatalf("Read(%d) after recovery: %d bytes, %v", from, len(b), it.Err())
			}
		}
		checkLog(t, l)
	})
}

// FuzzIndex opens a partition whose segments are sound but whose index files
// hold arbitrary bytes, after a clean shutdown. Opening and reading must never
// panic and must return the right batches.
func FuzzIndex(f *testing.F) {
	seg := validSegment(f, 12)
	f.Add([]byte{}, []byte{})
	f.Add(appendOffsetEntry(nil, 0, 5, 0), appendTimeEntry(nil, 0, 105, 5))
	f.Add([]byte{0, 0, 0, 9, 0, 0, 1, 0, 0, 0, 0, 3}, []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, idx, tidx []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "t-0")
		os.MkdirAll(dir, 0o755)
		// Two segments: the first (inactive) carries the fuzzed indexes.
		h := record.Header{}
		it := record.Batches(seg)
		var cut int
		for it.Next() {
			h = it.Header()
			if it.Consumed() > len(seg)/2 {
				cut = it.Consumed()
				break
			}
		}
		os.WriteFile(filepath.Join(dir, segmentName(0, logSuffix)), seg[:cut], 0o644)
		os.WriteFile(filepath.Join(dir, segmentName(0, indexSuffix)), idx, 0o644)
		os.WriteFile(filepath.Join(dir, segmentName(0, timeIndexSuffix)), tidx, 0o644)
		os.WriteFile(filepath.Join(dir, segmentName(h.NextOffset(), logSuffix)), seg[cut:], 0o644)
		os.WriteFile(filepath.Join(dir, segmentName(h.NextOffset(), indexSuffix)), idx, 0o644)
		os.WriteFile(filepath.Join(dir, segmentName(h.NextOffset(), timeIndexSuffix)), tidx, 0o644)
		writeOffsetsCheckpoint(vfs.Default, filepath.Join(root, recoveryPointFile), map[partitionKey]int64{{"t", 0}: 1 << 40})
		os.WriteFile(filepath.Join(root, cleanShutdownFile), nil, 0o644)
		d, err := OpenDir(root, quietOptions(), func(string, int32) Config { return tinyConfig() })
		if err != nil {
			t.Fatalf("OpenDir: %v", err)
		}
		defer d.closeLogs()
		l, _ := d.Log("t", 0)
		want := record.Batches(seg)
		for want.Next() {
			wh := want.Header()
			for off := wh.BaseOffset; off <= wh.LastOffset(); off++ {
				b, err := l.Read(off, 1, l.LogEndOffset(), true)
				if err != nil {
					t.Fatalf("Read(%d): %v", off, err)
				}
				if got, err := record.ParseHeader(b); err != nil || got.BaseOffset != wh.BaseOffset || len(b) != wh.Size() {
					t.Fatalf("Read(%d) = %+v, %v; want batch at %d", off, got, err, wh.BaseOffset)
				}
			}
		}
		for ts := int64(99); ts < 115; ts++ {
			if _, _, _, _, err := l.OffsetForTimestamp(ts); err != nil {
				t.Fatalf("OffsetForTimestamp(%d): %v", ts, err)
			}
		}
	})
}
