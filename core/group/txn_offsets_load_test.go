package group

import (
	"testing"

	"github.com/gregorbroker/gregor/core/partition"
)

// TestTxnMarkerDuringLoad: a COMMIT marker committed on __consumer_offsets
// while the partition's new coordinator is loading, past the end its load
// replays, applies the transaction's offsets once loaded. Before, the
// completion reached a shard not loaded yet and was lost: the offsets stayed
// pending (UNSTABLE_OFFSET_COMMIT for OffsetFetch with require_stable) and a
// later abort of the producer dropped them, sending the next owner of the
// input back to older offsets (duplicates in an exactly-once copy).
func TestTxnMarkerDuringLoad(t *testing.T) {
	e := newEnv(t, 1)
	tp := TopicPartition{Topic: "in", Partition: 0}
	errs, err := e.c.CommitTxnOffsets(TxnCommitRequest{Group: "g", ProducerID: 7, ProducerEpoch: 0, Generation: -1,
		Partitions: []CommitPartition{{TopicPartition: tp, Offset: 40, LeaderEpoch: -1}}})
	if err != nil || errs[0] != nil {
		t.Fatalf("CommitTxnOffsets: %v %v", err, errs)
	}
	var hookErr error
	ran := false
	testHookLoadEnd = func(idx int32, end int64) {
		if ran {
			return
		}
		ran = true
		// As appendMarker does once the marker is committed, while this
		// shard is between fixing its end and being loaded.
		off, err := e.parts[idx].WriteTxnMarker(partition.TxnMarker{ProducerID: 7, ProducerEpoch: 0, Commit: true})
		if err != nil {
			hookErr = err
			return
		}
		if off < end {
			t.Errorf("marker at %d, below the load's end %d", off, end)
		}
		e.c.CompleteTxn(idx, 7, true, off)
	}
	t.Cleanup(func() { testHookLoadEnd = nil })
	e.restart() // waits for the load
	if !ran || hookErr != nil {
		t.Fatalf("marker during the load: ran %v, %v", ran, hookErr)
	}
	got, err := e.c.FetchOffsets(FetchRequest{Group: "g", Partitions: []TopicPartition{tp}})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Offset.Offset != 40 {
		t.Fatalf("committed offset after a marker during the load = %d, want 40", got[0].Offset.Offset)
	}
	if u := e.c.UnstableOffsets("g"); len(u) != 0 {
		t.Fatalf("unstable after the commit marker: %v", u)
	}
	// A restart replays the marker itself.
	testHookLoadEnd = nil
	e.restart()
	if got, err := e.c.FetchOffsets(FetchRequest{Group: "g", Partitions: []TopicPartition{tp}}); err != nil || got[0].Offset.Offset != 40 {
		t.Fatalf("after a second restart: %+v, %v", got, err)
	}
}
