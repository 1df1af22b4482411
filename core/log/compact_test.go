package log

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/record"
)

// fillKeys appends rounds of writes to keys k0..k(n-1), a batch of three
// records at a time, and returns every record written.
func fillKeys(t *testing.T, e *env, l *Log, codec record.Codec, rounds, n int) []got {
	t.Helper()
	var written []got
	for r := 0; r < rounds; r++ {
		for i := 0; i < n; i += 3 {
			var kvs []kv
			for j := i; j < min(i+3, n); j++ {
				kvs = append(kvs, k(fmt.Sprint("k", j), fmt.Sprintf("v%d-%d", j, r)))
			}
			ts := e.clock.Now().UnixMilli()
			off := mustAppend(t, l, keyedBatch(t, keyedSpec{codec: codec, ts: ts}, kvs...))
			for d, x := range kvs {
				written = append(written, got{offset: off + int64(d), key: string(x.key), value: string(x.value), ts: ts + int64(d), headers: d % 2})
			}
		}
	}
	return written
}

func TestCleanKeepsLatestPerKey(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			e := newEnv(t, compactConfig())
			l := e.log("t", 0)
			written := fillKeys(t, e, l, codec, 6, 10)
			leo := l.LogEndOffset()
			segsBefore := l.Segments()
			if len(segsBefore) < 4 {
				t.Fatalf("want several segments, have %d", len(segsBefore))
			}
			active := segsBefore[len(segsBefore)-1]
			activePath := filepath.Join(l.Path(), segmentName(active.BaseOffset, logSuffix))
			activeBytes, _ := os.ReadFile(activePath)

			res := mustClean(t, l, CleanOptions{Limit: leo})
			if !res.Cleaned || res.EndOffset != active.BaseOffset || res.RecordsKept >= res.RecordsRead {
				t.Fatalf("result %+v", res)
			}
			if got := l.CleanerCheckpoint(); got != active.BaseOffset {
				t.Fatalf("cleaner checkpoint %d, want %d", got, active.BaseOffset)
			}
			if after, _ := os.ReadFile(activePath); !bytes.Equal(after, activeBytes) {
				t.Fatal("the active segment changed")
			}
			if l.LogEndOffset() != leo || l.LogStartOffset() != 0 {
				t.Fatalf("offsets moved: start %d end %d", l.LogStartOffset(), l.LogEndOffset())
			}

			rs, hs := allRecords(t, l)
			// Below the active segment: exactly the latest record per key.
			// In it: everything written there.
			want := map[int64]got{}
			latest := latestBelow(written, active.BaseOffset)
			for _, w := range written {
				if w.offset >= active.BaseOffset || latest[w.key].offset == w.offset {
					want[w.offset] = w
				}
			}
			if len(rs) != len(want) {
				t.Fatalf("read %d records, want %d", len(rs), len(want))
			}
			for _, r := range rs {
				if w, ok := want[r.offset]; !ok || w != r {
					t.Fatalf("record %+v, want %+v (present %v)", r, w, ok)
				}
			}
			for _, h := range hs {
				if h.Codec() != codec {
					t.Fatalf("batch %v lost its codec %s", h, codec)
				}
			}
			// A second pass merges the shrunken segments.
			mustClean(t, l, CleanOptions{Limit: leo, Force: true})
			if n := len(l.Segments()); n >= len(segsBefore) {
				t.Fatalf("segments %d, before %d: small cleaned segments were not merged", n, len(segsBefore))
			}
			if again, _ := allRecords(t, l); len(again) != len(rs) {
				t.Fatalf("after merging %d records, want %d", len(again), len(rs))
			}

			// The result survives a clean reopen and a crash.
			e.reopen()
			l, _ = e.dir.Log("t", 0)
			if again, _ := allRecords(t, l); len(again) != len(rs) {
				t.Fatalf("after reopen %d records, want %d", len(again), len(rs))
			}
			if l.CleanerCheckpoint() != active.BaseOffset {
				t.Fatalf("cleaner checkpoint after reopen %d", l.CleanerCheckpoint())
			}
			e.crash()
			l, _ = e.dir.Log("t", 0)
			if again, _ := allRecords(t, l); len(again) != len(rs) {
				t.Fatalf("after crash %d records, want %d", len(again), len(rs))
			}
		})
	}
}

func TestCleanReadsAcrossGaps(t *testing.T) {
	e := newEnv(t, compactConfig())
	l := e.log("t", 0)
	// Offsets 0..9: k0 written ten times, each a second apart; then other keys.
	for i := 0; i < 10; i++ {
		mustAppend(t, l, keyedBatch(t, keyedSpec{ts: 1000 * int64(i+1)}, k("k0", fmt.Sprint(i))))
	}
	for i := 0; i < 30; i++ {
		mustAppend(t, l, keyedBatch(t, keyedSpec{ts: 20_000 + int64(i)}, k(fmt.Sprint("x", i), "v")))
	}
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()})
	b, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := record.ParseHeader(b)
	if h.BaseOffset != 9 {
		t.Fatalf("Read(0) starts at offset %d, want 9 (the only k0 left)", h.BaseOffset)
	}
	off, ts, _, found, err := l.OffsetForTimestamp(3000)
	if err != nil || !found || off != 9 || ts != 10_000 {
		t.Fatalf("OffsetForTimestamp(3000) = %d, %d, %v, %v; want 9, 10000", off, ts, found, err)
	}
	for _, o := range []int64{0, 5, 9, 10, 25} {
		if _, err := l.Read(o, 100, l.LogEndOffset(), true); err != nil {
			t.Fatalf("Read(%d): %v", o, err)
		}
	}
}

func TestCleanTombstones(t *testing.T) {
	cfg := compactConfig()
	cfg.DeleteRetentionMs = 60_000
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	ts := e.clock.Now().UnixMilli()
	mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts}, k("a", "1"), k("b", "1")))
	mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts + 10}, tomb("a"), k("c", "1")))
	for i := 0; i < 40; i++ { // roll past them
		mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts + 100}, k(fmt.Sprint("f", i), "x")))
	}
	check := func(wantTomb bool) {
		t.Helper()
		rs, _ := allRecords(t, l)
		m := latestByKey(rs)
		if _, ok := m["a"]; ok != wantTomb {
			t.Fatalf("tombstone for a present=%v, want %v", ok, wantTomb)
		}
		if ok := m["a"].tombstone; wantTomb && !ok {
			t.Fatalf("a's surviving record is not the tombstone: %+v", m["a"])
		}
		if m["b"].value != "1" || m["b"].ts != ts+1 || m["c"].ts != ts+11 {
			t.Fatalf("b or c changed: %+v %+v", m["b"], m["c"])
		}
		for _, r := range rs {
			if r.key == "a" && !r.tombstone {
				t.Fatal("a's old value survived")
			}
		}
	}
	if res := mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()}); !res.Cleaned {
		t.Fatal("first cleaning did not run")
	}
	check(true)

	// Before delete.retention.ms has passed there is nothing to do.
	e.clock.Advance(59 * time.Second)
	if res := mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()}); res.Cleaned {
		t.Fatalf("cleaned with nothing dirty and no expired tombstone: %+v", res)
	}
	check(true)

	// The horizon survives a restart in the batch headers.
	e.reopen()
	l, _ = e.dir.Log("t", 0)
	e.clock.Advance(2 * time.Second)
	if res := mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()}); !res.Cleaned {
		t.Fatal("expired tombstone did not trigger a cleaning")
	}
	check(false)
	if res := mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()}); res.Cleaned {
		t.Fatalf("cleaned again with nothing to do: %+v", res)
	}
}

func TestCleanLimits(t *testing.T) {
	tests := []struct {
		name   string
		limit  func(segs []SegmentInfo) int64
		minLag int64
		// cleanedSegs is how many leading segments may be rewritten.
		cleanedSegs func(segs []SegmentInfo) int
	}{
		{"high watermark mid-log", func(s []SegmentInfo) int64 { return s[3].BaseOffset + 1 }, 0, func([]SegmentInfo) int { return 3 }},
		{"high watermark at a boundary", func(s []SegmentInfo) int64 { return s[3].BaseOffset }, 0, func([]SegmentInfo) int { return 3 }},
		{"nothing below the watermark", func(s []SegmentInfo) int64 { return 1 }, 0, func([]SegmentInfo) int { return 0 }},
		{"min compaction lag", func(s []SegmentInfo) int64 { return math.MaxInt64 }, 30_000, func(s []SegmentInfo) int {
			// The first segment holding a record younger than the lag, with
			// the clock at 80 s after the first write.
			for i, x := range s {
				if x.LargestTimestamp > 1_700_000_000_000+80_000-30_000 {
					return i
				}
			}
			return len(s) - 1
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := compactConfig()
			cfg.MinCompactionLagMs = tc.minLag
			e := newEnv(t, cfg)
			l := e.log("t", 0)
			var written []got
			for r := 0; r < 8; r++ {
				written = append(written, fillKeys(t, e, l, record.CodecNone, 1, 9)...)
				e.clock.Advance(10 * time.Second)
			}
			segs := l.Segments()
			if len(segs) < 6 {
				t.Fatalf("%d segments", len(segs))
			}
			n := tc.cleanedSegs(segs)
			bound := segs[n].BaseOffset
			keep := make([][]byte, 0)
			for _, s := range segs[n:] {
				b, _ := os.ReadFile(filepath.Join(l.Path(), segmentName(s.BaseOffset, logSuffix)))
				keep = append(keep, b)
			}
			res := mustClean(t, l, CleanOptions{Limit: tc.limit(segs), Force: true})
			if n == 0 {
				if res.Cleaned {
					t.Fatalf("cleaned %+v with nothing cleanable", res)
				}
				return
			}
			if res.EndOffset != bound {
				t.Fatalf("end offset %d, want %d", res.EndOffset, bound)
			}
			for i, s := range segs[n:] {
				b, err := os.ReadFile(filepath.Join(l.Path(), segmentName(s.BaseOffset, logSuffix)))
				if err != nil || !bytes.Equal(b, keep[i]) {
					t.Fatalf("segment %d at or above the limit changed (%v)", s.BaseOffset, err)
				}
			}
			rs, _ := allRecords(t, l)
			wantN := 0
			latest := latestByKey(written[:0])
			for _, w := range written {
				if w.offset < bound {
					latest[w.key] = w
				} else {
					wantN++
				}
			}
			if len(rs) != wantN+len(latest) {
				t.Fatalf("%d records, want %d above the bound plus %d latest below", len(rs), wantN, len(latest))
			}
		})
	}
}

func TestCleanDirtyRatioAndLag(t *testing.T) {
	cfg := compactConfig()
	cfg.MaxCompactionLagMs = 3_600_000
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	// Many distinct keys: compaction keeps most bytes, so one more small
	// dirty segment stays below the 0.5 ratio.
	for i := 0; i < 120; i++ {
		mustAppend(t, l, keyedBatch(t, keyedSpec{ts: e.clock.Now().UnixMilli()}, k(fmt.Sprint("key", i), "value")))
	}
	if res := mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()}); !res.Cleaned || res.DirtyRatio != 1 {
		t.Fatalf("first cleaning: %+v", res)
	}
	for i := 0; i < 25; i++ {
		mustAppend(t, l, keyedBatch(t, keyedSpec{ts: e.clock.Now().UnixMilli()}, k(fmt.Sprint("key", i), "new")))
	}
	res := mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()})
	if res.Cleaned {
		t.Fatalf("cleaned below min.cleanable.dirty.ratio: %+v", res)
	}
	// max.compaction.lag.ms forces it once the oldest dirty record is old.
	e.clock.Advance(time.Hour + time.Second)
	res = mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()})
	if !res.Cleaned || res.DirtyRatio >= 0.5 {
		t.Fatalf("max compaction lag did not force a cleaning: %+v", res)
	}
	// A ratio of 0 cleans whenever anything is dirty.
	cfg.MinCleanableDirtyRatio = 0
	l.SetConfig(cfg)
	for i := 0; i < 25; i++ {
		mustAppend(t, l, keyedBatch(t, keyedSpec{ts: e.clock.Now().UnixMilli()}, k(fmt.Sprint("key", i), "newer")))
	}
	if res := mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()}); !res.Cleaned {
		t.Fatal("ratio 0 did not clean")
	}
	// A log without the compact policy is never cleaned.
	cfg.Compact = false
	l.SetConfig(cfg)
	if res := mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), Force: true}); res.Cleaned {
		t.Fatal("cleaned a log whose policy is delete")
	}
}

func TestCleanProducerAndTransactionalBatches(t *testing.T) {
	e := newEnv(t, compactConfig())
	l := e.log("t", 0)
	ts := e.clock.Now().UnixMilli()
	// Producer 7 writes twice; both batches are superseded later.
	first := mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts, pid: 7, seq: 0}, k("p", "1"), k("q", "1")))
	last := mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts, pid: 7, seq: 2}, k("p", "2"), k("q", "2")))
	// A committed transactional batch, superseded later like any other:
	// emptied, but it is producer 9's last batch, so its header stays; its
	// marker stays while that batch does.
	txn := mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts, pid: 9, seq: 0, transactional: true}, k("p", "txn")))
	ctl := mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts, pid: 9, transactional: true, control: true}, kv{key: []byte{0, 0, 0, 1}, value: []byte{0, 0, 0, 0, 0, 0}}))
	// Keyless records are dropped, as Kafka's cleaner does.
	mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts}, kv{value: []byte("nokey")}, k("r", "1")))
	for i := 0; i < 30; i++ {
		mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts}, k("p", fmt.Sprint("x", i)), k("q", "y")))
	}
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()})
	_, hs := allRecords(t, l)
	byBase := map[int64]record.Header{}
	for _, h := range hs {
		byBase[h.BaseOffset] = h
	}
	if _, ok := byBase[first]; ok {
		t.Fatal("producer 7's emptied first batch was kept")
	}
	h, ok := byBase[last]
	if !ok || h.NumRecords != 0 || h.LastOffsetDelta != 1 || h.BaseSequence != 2 || h.LastSequence() != 3 || h.ProducerID != 7 || h.ProducerEpoch != 3 {
		t.Fatalf("producer 7's last batch: present %v, %+v; want an empty batch keeping its sequence", ok, h)
	}
	if h, ok := byBase[txn]; !ok || h.NumRecords != 0 || !h.IsTransactional() || h.ProducerID != 9 {
		t.Fatalf("transactional batch: %v %+v; want producer 9's emptied last batch", ok, h)
	}
	if h, ok := byBase[ctl]; !ok || !h.IsControl() {
		t.Fatalf("control batch: %v %+v", ok, h)
	}
	rs, _ := allRecords(t, l)
	for _, r := range rs {
		if r.key == "" {
			t.Fatalf("keyless record survived: %+v", r)
		}
	}
	if latestByKey(rs)["r"].value != "1" {
		t.Fatal("the keyed record beside a keyless one was lost")
	}
}

func TestCleanOffsetMapBound(t *testing.T) {
	e := newEnv(t, compactConfig())
	l := e.log("t", 0)
	written := fillKeys(t, e, l, record.CodecNone, 1, 60)
	written = append(written, fillKeys(t, e, l, record.CodecNone, 1, 60)...)
	segs := l.Segments()
	// Room for about one segment's keys: the cleaning stops at a boundary.
	res := mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), MaxMapBytes: 20 * (mapEntryOverhead + 3)})
	if !res.Cleaned || res.EndOffset >= segs[len(segs)-1].BaseOffset || res.EndOffset <= 0 {
		t.Fatalf("partial cleaning: %+v", res)
	}
	for l.CleanerCheckpoint() < segs[len(segs)-1].BaseOffset {
		before := l.CleanerCheckpoint()
		mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), MaxMapBytes: 20 * (mapEntryOverhead + 3), Force: true})
		if l.CleanerCheckpoint() <= before {
			t.Fatalf("cleaner checkpoint stuck at %d", before)
		}
	}
	rs, _ := allRecords(t, l)
	active := l.Segments()[len(l.Segments())-1].BaseOffset
	latest := latestBelow(written, active)
	for _, r := range rs {
		if r.offset < active && latest[r.key].offset != r.offset {
			t.Fatalf("stale record %+v survived", r)
		}
	}
	// A map that cannot hold one segment is an error, not a silent no-op.
	l2 := e.log("t", 1)
	fillKeys(t, e, l2, record.CodecNone, 3, 30)
	if _, err := l2.Clean(CleanOptions{Limit: l2.LogEndOffset(), MaxMapBytes: 10}); err == nil {
		t.Fatal("a map too small for one segment did not fail")
	}
}

func TestCleanupPolicyRetention(t *testing.T) {
	tests := []struct {
		name            string
		compact, delete bool
		wantDeleted     bool
	}{
		{"delete", false, true, true},
		{"compact", true, false, false},
		{"compact,delete", true, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := compactConfig()
			cfg.Compact, cfg.Delete = tc.compact, tc.delete
			cfg.RetentionMs = 60_000
			e := newEnv(t, cfg)
			l := e.log("t", 0)
			// Distinct keys, then a rewrite of one: cleaning leaves the old
			// segments holding data.
			fillKeys(t, e, l, record.CodecNone, 1, 40)
			mustAppend(t, l, keyedBatch(t, keyedSpec{ts: e.clock.Now().UnixMilli()}, k("k0", "again")))
			if tc.compact {
				mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()})
			}
			e.clock.Advance(2 * time.Minute)
			n, err := l.ApplyRetention()
			if err != nil {
				t.Fatal(err)
			}
			if (n > 0) != tc.wantDeleted {
				t.Fatalf("retention deleted %d segments, want deletion %v", n, tc.wantDeleted)
			}
		})
	}
}

func TestCheckCompactedKeys(t *testing.T) {
	tests := []struct {
		name string
		kvs  []kv
		want error
	}{
		{"keyed", []kv{k("a", "1"), tomb("b")}, nil},
		{"keyless", []kv{k("a", "1"), {value: []byte("x")}}, ErrNoKeyInCompactedTopic},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckCompactedKeys(keyedBatch(t, keyedSpec{codec: record.CodecLZ4}, tc.kvs...), 1<<20)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	b := keyedBatch(t, keyedSpec{}, k("a", "1"))
	b[len(b)-1] ^= 0xff
	if err := CheckCompactedKeys(b, 1<<20); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged batch: %v, want ErrCorrupt", err)
	}
}
