package log

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fillAborted writes keyed records around aborted transactions spread over
// many small segments, indexing each abort, and returns the index entries.
func fillAborted(t *testing.T, e *env, l *Log) []AbortedTxn {
	t.Helper()
	ts := e.clock.Now().UnixMilli()
	for i := 0; i < 12; i++ {
		pid := int64(100 + i)
		first := mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts, pid: pid, transactional: true}, k("a", fmt.Sprint("aborted", i))))
		mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts}, k("a", fmt.Sprint("v", i)), k("b", fmt.Sprint("v", i))))
		marker := mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts, pid: pid, transactional: true, control: true},
			kv{key: []byte{0, 0, 0, 0}, value: []byte{0, 0, 0, 0, 0, 0}}))
		if err := l.AppendAbortedTxn(AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: marker, LastStableOffset: marker + 1}); err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, keyedBatch(t, keyedSpec{ts: ts}, k("a", fmt.Sprint("w", i)), k("b", fmt.Sprint("w", i))))
	}
	return l.AbortedTxns(0, l.LogEndOffset())
}

// Compaction rewrites segments holding transactional data and abort
// markers; the aborted-transaction index must come along, or read_committed
// readers would be handed aborted records as committed ones. Merged
// segments carry the entries of every segment they replace, across a
// reopen. The aborted data itself is removed, as Kafka's cleaner does.
func TestCleanKeepsAbortedTxnIndex(t *testing.T) {
	e := newEnv(t, compactConfig())
	l := e.log("t", 0)
	want := fillAborted(t, e, l)
	if len(want) != 12 {
		t.Fatalf("%d index entries before cleaning, want 12", len(want))
	}
	segsBefore := len(l.segs)
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset()})
	mustClean(t, l, CleanOptions{Limit: l.LogEndOffset(), Force: true})
	if len(l.segs) >= segsBefore {
		t.Fatalf("%d segments after cleaning, %d before: nothing was merged", len(l.segs), segsBefore)
	}
	if got := l.AbortedTxns(0, l.LogEndOffset()); !reflect.DeepEqual(got, want) {
		t.Fatalf("after cleaning:\n got %+v\nwant %+v", got, want)
	}
	// Below the active segment, which is never cleaned, the aborted records
	// are gone; each producer's batch stays as an empty transactional batch
	// that keeps its producer state.
	active := l.segs[len(l.segs)-1].base
	recs, hs := allRecords(t, l)
	for _, r := range recs {
		if strings.HasPrefix(r.value, "aborted") && r.offset < active {
			t.Fatalf("aborted record kept at offset %d: %+v", r.offset, r)
		}
	}
	empty, below := map[int64]bool{}, 0
	for _, a := range want {
		if a.FirstOffset < active {
			below++
		}
	}
	for _, h := range hs {
		if h.ProducerID >= 100 && h.IsTransactional() && !h.IsControl() && h.BaseOffset < active {
			if h.NumRecords != 0 {
				t.Fatalf("producer %d's aborted batch at %d kept %d records", h.ProducerID, h.BaseOffset, h.NumRecords)
			}
			empty[h.ProducerID] = true
		}
	}
	if len(empty) != below || below < 8 {
		t.Fatalf("%d producers kept their last batch's header, want %d (of %d)", len(empty), below, len(want))
	}
	e.reopen()
	l, _ = e.dir.Log("t", 0)
	if got := l.AbortedTxns(0, l.LogEndOffset()); !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen:\n got %+v\nwant %+v", got, want)
	}
}

// A crash at either side of a merge's commit point loads each aborted
// transaction exactly once: before it, the first segment's merged index is
// filtered to its own range and the others keep theirs; after it, the
// swap's recovery keeps the merged index and removes the others.
func TestCleanTxnIndexCrash(t *testing.T) {
	for _, committed := range []bool{false, true} {
		t.Run(fmt.Sprintf("committed=%v", committed), func(t *testing.T) {
			// The cleaned state, to take the merged files from.
			a := newEnv(t, compactConfig())
			la := a.log("t", 0)
			want := fillAborted(t, a, la)
			mustClean(t, la, CleanOptions{Limit: la.LogEndOffset(), Force: true})
			first := la.segs[0].base
			if err := a.dir.Close(); err != nil {
				t.Fatal(err)
			}
			a.dir = nil
			after := filepath.Join(a.path, "t-0")

			// The same writes, uncleaned, crash into the merge.
			b := newEnv(t, compactConfig())
			lb := b.log("t", 0)
			fillAborted(t, b, lb)
			if err := b.dir.Close(); err != nil {
				t.Fatal(err)
			}
			b.dir = nil
			dir := filepath.Join(b.path, "t-0")
			copyFile(t, filepath.Join(after, segmentName(first, txnIndexSuffix)), filepath.Join(dir, segmentName(first, txnIndexSuffix)))
			if committed {
				copyFile(t, filepath.Join(after, segmentName(first, logSuffix)), filepath.Join(dir, segmentName(first, logSuffix)+swapSuffix))
			}
			if err := os.Remove(filepath.Join(dir, "cleaner-offset-checkpoint")); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			b.open()
			lb, _ = b.dir.Log("t", 0)
			if got := lb.AbortedTxns(0, lb.LogEndOffset()); !reflect.DeepEqual(got, want) {
				t.Fatalf("after the crash:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}
