package log

import (
	"bytes"
	"os"
	"testing"
)

func lastTimeOf(idx []byte, base int64) int64 {
	ts, _ := lastTime(idx, base)
	return ts
}

// indexFilesMatch fails unless the index files of segment s hold its
// in-memory indexes exactly.
func indexFilesMatch(t *testing.T, what string, s *segment, si *segIndex) {
	t.Helper()
	for _, x := range []struct {
		suffix string
		want   []byte
	}{{indexSuffix, si.off}, {timeIndexSuffix, si.tim}} {
		got, err := os.ReadFile(s.path(x.suffix))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, x.want) {
			t.Fatalf("%s: %s holds %d bytes, the index %d", what, s.path(x.suffix), len(got), len(x.want))
		}
	}
}

// Appends index in memory alone; a flush, a roll and a close bring the index
// files up to date, since a restart trusts the index files of segments below
// the recovery point.
func TestIndexFilesFollowFlushRollAndClose(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IndexIntervalBytes = 100
	cfg.SegmentBytes = 2000
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	fill(t, l, 4, 3)
	l.mu.RLock()
	a := l.active()
	entries := offsetEntries(a.idx.Load().off)
	l.mu.RUnlock()
	if entries == 0 {
		t.Fatal("no index entries after 4 batches")
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	l.mu.RLock()
	si := &segIndex{off: bytes.Clone(a.idx.Load().off), tim: bytes.Clone(a.idx.Load().tim)}
	l.mu.RUnlock()
	indexFilesMatch(t, "after Sync", a, si)

	fill(t, l, 30, 3) // rolls
	// The log is idle now: its segments may be read without its lock.
	rolled := l.segs[:len(l.segs)-1]
	if len(rolled) < 2 {
		t.Fatalf("%d segments after 34 batches", len(l.segs))
	}
	for _, s := range rolled {
		si, err := s.mapIndexes()
		if err != nil {
			t.Fatal(err)
		}
		entries, err, last := offsetEntries(si.off), s.checkIndexes(si), lastTimeOf(si.tim, s.base)
		si.release()
		if err != nil || entries == 0 {
			t.Fatalf("rolled segment %s: %d offset entries on disk, %v", s, entries, err)
		}
		if last != s.maxTS {
			t.Fatalf("rolled segment %s: last time entry %d, largest timestamp %d", s, last, s.maxTS)
		}
	}
	a = l.active()
	si = &segIndex{off: bytes.Clone(a.idx.Load().off), tim: bytes.Clone(a.idx.Load().tim)}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	si.tim = maybeAppendTime(si.tim, a.base, a.maxTS, a.maxTSOffset)
	indexFilesMatch(t, "after Close", a, si)
}
