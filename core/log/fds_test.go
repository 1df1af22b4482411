//go:build linux

package log

import (
	"fmt"
	"os"
	"testing"
)

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// checkPerPartition fails when the logs opened since base hold more than one
// descriptor each.
func checkPerPartition(t *testing.T, what string, base, partitions int) {
	t.Helper()
	if got := openFDs(t) - base; got > partitions {
		t.Fatalf("%s: %d partitions hold %d descriptors, want at most one each", what, partitions, got)
	}
}

// An idle partition holds its active segment's .log open and nothing else,
// after a restart and after its appends stop (Kafka: one, its indexes
// memory-mapped or not loaded), so that 10,000 partitions fit an open-file
// limit of 20,000.
func TestIdlePartitionsHoldOneDescriptor(t *testing.T) {
	const partitions = 40
	cfg := DefaultConfig()
	cfg.IndexIntervalBytes = 100 // every batch gets index entries
	e := newEnv(t, cfg)
	base := openFDs(t)
	logs := make([]*Log, partitions)
	for p := range logs {
		logs[p] = e.log("t", int32(p))
		fill(t, logs[p], 5, 3)
	}
	checkPerPartition(t, "after appends", base, partitions)
	for _, l := range logs {
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		fill(t, l, 5, 3)
	}
	checkPerPartition(t, "after a flush and more appends", base, partitions)

	if err := e.dir.Close(); err != nil {
		t.Fatal(err)
	}
	e.dir = nil
	base = openFDs(t)
	e.open()
	checkPerPartition(t, "after a clean restart", base, partitions)
	for p := range partitions {
		l, ok := e.dir.Log("t", int32(p))
		if !ok {
			t.Fatalf("partition %d missing after restart", p)
		}
		if hs := readAll(t, l, 0); len(hs) != 10 || l.LogEndOffset() != 30 {
			t.Fatalf("partition %d: %d batches, end %d after restart", p, len(hs), l.LogEndOffset())
		}
	}
	checkPerPartition(t, "after reads", base, partitions)
	e.crash()
	for p := range partitions {
		l, _ := e.dir.Log("t", int32(p))
		if hs := readAll(t, l, 0); len(hs) != 10 {
			t.Fatalf("partition %d: %d batches after a crash", p, len(hs))
		}
		if off, _, _, found, err := l.OffsetForTimestamp(1011); err != nil || !found || off != 4 {
			t.Fatalf("partition %d: offset for timestamp 1011: %d, %v, %v", p, off, found, err)
		}
	}
}

// After a restart a log with many segments holds its active segment's .log
// open; older ones open when read.
func TestRestartOpensOlderSegmentsOnRead(t *testing.T) {
	cfg := tinyConfig()
	cfg.SegmentBytes = 400
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	fill(t, l, 40, 3)
	segments := len(l.Segments())
	if segments < 10 {
		t.Fatalf("%d segments after 40 batches", segments)
	}
	for _, crash := range []bool{false, true} {
		if crash {
			e.dir.closeLogs()
		} else if err := e.dir.Close(); err != nil {
			t.Fatal(err)
		}
		e.dir = nil
		base := openFDs(t)
		e.open()
		checkPerPartition(t, fmt.Sprintf("%d segments after a restart (crash %v)", segments, crash), base, 1)
		l, _ = e.dir.Log("t", 0)
		if hs := readAll(t, l, 0); len(hs) != 40 {
			t.Fatalf("crash %v: %d batches after the restart", crash, len(hs))
		}
		if got := openFDs(t) - base; got != segments {
			t.Fatalf("crash %v: %d descriptors after reading %d segments", crash, got, segments)
		}
	}
	// Deleting, truncating into and appending after closed segments work.
	segs := l.Segments()
	cut := segs[3].BaseOffset
	if err := l.DeleteRecordsBefore(cut); err != nil {
		t.Fatal(err)
	}
	if got := l.Segments()[0].BaseOffset; got != cut {
		t.Fatalf("first segment %d after deleting records before %d", got, cut)
	}
	to := segs[5].BaseOffset + 1
	if err := l.Truncate(to); err != nil {
		t.Fatal(err)
	}
	off := mustAppend(t, l, makeBatch(t, batchSpec{records: 3, ts: 5000}))
	hs := readAll(t, l, cut)
	if last := hs[len(hs)-1]; last.BaseOffset != off || off > to || hs[0].BaseOffset != cut {
		t.Fatalf("batches %d..%d after deleting before %d, truncating to %d and appending at %d", hs[0].BaseOffset, last.BaseOffset, cut, to, off)
	}
}
