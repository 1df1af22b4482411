package group

import (
	"errors"
	"testing"

	"github.com/gregorbroker/gregor/core/partition"
)

// TestTxnOffsetsVisibleOnCommit: transactional offsets are pending (and
// unstable) until the COMMIT marker, dropped on ABORT, and the same holds
// when the state is rebuilt from the log after a restart, including a
// transaction still open at the restart.
func TestTxnOffsetsVisibleOnCommit(t *testing.T) {
	e := newEnv(t, 1)
	tp := TopicPartition{Topic: "in", Partition: 0}
	commit := func(pid int64, epoch int16, off int64) {
		t.Helper()
		errs, err := e.c.CommitTxnOffsets(TxnCommitRequest{Group: "g", ProducerID: pid, ProducerEpoch: epoch, Generation: -1,
			Partitions: []CommitPartition{{TopicPartition: tp, Offset: off, LeaderEpoch: -1}}})
		if err != nil || errs[0] != nil {
			t.Fatalf("CommitTxnOffsets: %v %v", err, errs)
		}
	}
	committed := func() int64 {
		t.Helper()
		got, err := e.c.FetchOffsets(FetchRequest{Group: "g", Partitions: []TopicPartition{tp}})
		if err != nil {
			t.Fatal(err)
		}
		return got[0].Offset.Offset
	}
	marker := func(pid int64, epoch int16, ok bool) {
		t.Helper()
		off, err := e.parts[0].WriteTxnMarker(partition.TxnMarker{ProducerID: pid, ProducerEpoch: epoch, Commit: ok})
		if err != nil {
			t.Fatal(err)
		}
		e.c.CompleteTxn(0, pid, ok, off)
	}

	commit(1, 0, 10)
	if got := committed(); got != -1 {
		t.Fatalf("pending offset visible: %d", got)
	}
	if u := e.c.UnstableOffsets("g"); !u[tp] {
		t.Fatalf("unstable = %v", u)
	}
	marker(1, 0, true)
	if got := committed(); got != 10 {
		t.Fatalf("committed = %d, want 10", got)
	}
	if u := e.c.UnstableOffsets("g"); len(u) != 0 {
		t.Fatalf("unstable after commit = %v", u)
	}
	commit(2, 0, 20)
	marker(2, 0, false)
	if got := committed(); got != 10 {
		t.Fatalf("aborted offset applied: %d", got)
	}
	commit(3, 0, 30) // left open across the restart
	e.restart()
	if got := committed(); got != 10 {
		t.Fatalf("after restart committed = %d, want 10", got)
	}
	if u := e.c.UnstableOffsets("g"); !u[tp] {
		t.Fatalf("the open transaction's offset is not pending after restart: %v", u)
	}
	marker(3, 0, true)
	if got := committed(); got != 30 {
		t.Fatalf("committed after restart and commit = %d, want 30", got)
	}
	e.restart()
	if got := committed(); got != 30 {
		t.Fatalf("committed after a second restart = %d, want 30", got)
	}
	// A zombie epoch is fenced by the partition's producer state.
	_, err := e.c.CommitTxnOffsets(TxnCommitRequest{Group: "g", ProducerID: 3, ProducerEpoch: -1, Generation: -1,
		Partitions: []CommitPartition{{TopicPartition: tp, Offset: 99}}})
	if !errors.Is(err, ErrProducerFenced) {
		t.Fatalf("zombie commit: %v", err)
	}
}
