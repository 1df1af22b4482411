package log

import (
	"fmt"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/record"
)

var (
	commitKey = []byte{0, 0, 0, controlCommit}
	abortKey  = []byte{0, 0, 0, controlAbort}
	markerVal = []byte{0, 0, 0, 0, 0, 0}
)

// txnWrite appends one transactional batch of producer pid and its marker,
// indexing an abort; it returns the data batch's and the marker's offsets.
func txnWrite(t *testing.T, l *Log, ts, pid int64, seq int32, commit bool, kvs ...kv) (data, marker int64) {
	t.Helper()
	data = mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts, pid: pid, seq: seq, transactional: true}, kvs...))
	key := abortKey
	if commit {
		key = commitKey
	}
	marker = mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts, pid: pid, transactional: true, control: true}, kv{key: key, value: markerVal}))
	if !commit {
		if err := l.AppendAbortedTxn(AbortedTxn{ProducerID: pid, FirstOffset: data, LastOffset: marker, LastStableOffset: marker + 1}); err != nil {
			t.Fatal(err)
		}
	}
	return data, marker
}

// filler appends n non-transactional batches of keys nobody else uses, so
// that the segments above roll and become cleanable.
func filler(t *testing.T, l *Log, ts int64, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts}, k(fmt.Sprint("f", i%3), fmt.Sprint(i))))
	}
}

func headersByBase(t *testing.T, l *Log) map[int64]record.Header {
	t.Helper()
	_, hs := allRecords(t, l)
	out := map[int64]record.Header{}
	for _, h := range hs {
		out[h.BaseOffset] = h
	}
	return out
}

// Committed transactional records compact like any others (they shadow
// older records of their key and are shadowed by newer ones) and their
// tombstones are deleted after delete.retention.ms; aborted records never
// shadow anything. Before, transactional data was kept whole forever.
func TestCleanCompactsCommittedTransactionalData(t *testing.T) {
	cfg := compactConfig()
	cfg.DeleteRetentionMs = 1000
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	ts := e.clock.Now().UnixMilli()
	mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts}, k("a", "plain"), k("b", "plain"), k("c", "plain"), k("d", "plain")))
	// Producer 9 commits a new "a" and a tombstone for "b"; producer 10
	// commits a "c" that a plain write supersedes; producer 11 aborts a
	// "d" that must not hide the plain one.
	txnWrite(t, l, ts, 9, 0, true, k("a", "committed"), tomb("b"))
	txnWrite(t, l, ts, 10, 0, true, k("c", "committed-old"))
	txnWrite(t, l, ts, 11, 0, false, k("d", "aborted"))
	mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts}, k("c", "plain-new")))
	// Each producer writes again, so none of the batches above is its last.
	txnWrite(t, l, ts, 9, 2, true, k("x9", "1"))
	txnWrite(t, l, ts, 10, 1, true, k("x10", "1"))
	txnWrite(t, l, ts, 11, 1, true, k("x11", "1"))
	filler(t, l, ts, 30)

	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), Force: true})
	rs, _ := allRecords(t, l)
	active := l.segs[len(l.segs)-1].base
	var below []got
	for _, r := range rs {
		if r.offset < active && r.key[0] != 'f' && r.key[0] != 0 { // not filler, not a marker
			below = append(below, r)
		}
	}
	want := map[string]string{"a": "committed", "c": "plain-new", "d": "plain", "x9": "1", "x10": "1", "x11": "1"}
	seen := map[string]int{}
	for _, r := range below {
		seen[r.key]++
		switch {
		case r.key == "b":
			if !r.tombstone {
				t.Errorf("b: %+v, want only the committed tombstone", r)
			}
		case r.value != want[r.key]:
			t.Errorf("%s = %q survived, want only %q", r.key, r.value, want[r.key])
		}
	}
	for key := range want {
		if seen[key] != 1 {
			t.Errorf("%d records of %q kept, want 1", seen[key], key)
		}
	}
	if seen["b"] != 1 {
		t.Fatalf("%d records of b kept, want the tombstone alone", seen["b"])
	}

	// The transactional tombstone goes once delete.retention.ms has passed.
	e.clock.Advance(time.Duration(cfg.DeleteRetentionMs+1) * time.Millisecond)
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()})
	rs, _ = allRecords(t, l)
	for _, r := range rs {
		if r.key == "b" {
			t.Fatalf("transactional tombstone outlived delete.retention.ms: %+v", r)
		}
	}
}

// A transaction marker stays while any batch of its transaction is left
// below it; once none is, it gets a delete horizon and is removed at a
// cleaning after delete.retention.ms, an abort marker with its index entry.
func TestCleanRemovesMarkersAfterDeleteRetention(t *testing.T) {
	cfg := compactConfig()
	cfg.DeleteRetentionMs = 5000
	e := newEnv(t, cfg)
	l := e.log("t", 0)
	ts := e.clock.Now().UnixMilli()
	_, commitMarker := txnWrite(t, l, ts, 20, 0, true, k("a", "1"))
	_, abortMarker := txnWrite(t, l, ts, 21, 0, false, k("b", "aborted"))
	_, keptMarker := txnWrite(t, l, ts, 20, 1, true, k("a", "2"))
	txnWrite(t, l, ts, 21, 1, true, k("c", "1"))
	filler(t, l, ts, 40)
	if n := len(l.AbortedTxns(0, l.LogEndOffset())); n != 1 {
		t.Fatalf("%d aborted transactions indexed, want 1", n)
	}

	// First cleaning: the superseded and the aborted data go; their
	// markers were read with data of their transactions, so they stay.
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), Force: true})
	hs := headersByBase(t, l)
	for _, m := range []int64{commitMarker, abortMarker, keptMarker} {
		if h, ok := hs[m]; !ok || !h.IsControl() || h.NumRecords != 1 {
			t.Fatalf("marker at %d after the first cleaning: %v %+v", m, ok, h)
		}
	}
	// Second: no data of those two transactions is left; their markers get
	// a delete horizon but stay until it passes.
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), Force: true})
	e.clock.Advance(time.Duration(cfg.DeleteRetentionMs-1) * time.Millisecond)
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), Force: true})
	hs = headersByBase(t, l)
	for _, m := range []int64{commitMarker, abortMarker} {
		if h, ok := hs[m]; !ok || !hasDeleteHorizon(h) {
			t.Fatalf("marker at %d before its horizon: present %v, %+v; want it kept with a delete horizon", m, ok, h)
		}
	}
	if n := len(l.AbortedTxns(0, l.LogEndOffset())); n != 1 {
		t.Fatalf("%d aborted transactions indexed before the horizon, want 1", n)
	}

	// Past the horizon a cleaning runs by itself and removes both markers
	// and the abort's index entry; the marker of the live transaction stays.
	e.clock.Advance(2 * time.Millisecond)
	if res := mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()}); !res.Cleaned {
		t.Fatal("no cleaning once the markers' delete horizon passed")
	}
	hs = headersByBase(t, l)
	for _, m := range []int64{commitMarker, abortMarker} {
		if h, ok := hs[m]; ok {
			t.Fatalf("marker at %d outlived delete.retention.ms: %+v", m, h)
		}
	}
	if h, ok := hs[keptMarker]; !ok || !h.IsControl() {
		t.Fatalf("the marker of a transaction with data left was removed: %v %+v", ok, h)
	}
	if got := l.AbortedTxns(0, l.LogEndOffset()); len(got) != 0 {
		t.Fatalf("index entries of removed abort markers kept: %+v", got)
	}
	e.reopen()
	l, _ = e.dir.Log("t", 0)
	if got := l.AbortedTxns(0, l.LogEndOffset()); len(got) != 0 {
		t.Fatalf("after reopen: %+v", got)
	}
}
