package txn

import (
	"errors"
	"testing"
)

// TestTV2EndRetryWhilePrepared checks a transaction version 2 client's
// EndTxn retried (its answer lost, or it timed out) while the transaction
// is still prepared because a marker cannot be written: Kafka answers
// CONCURRENT_TRANSACTIONS to the same outcome, so the client waits for the
// markers, and INVALID_TXN_STATE to the other one. A PRODUCER_FENCED there
// makes franz-go report the transaction aborted while its commit goes on.
// The same holds for a coordinator that recovered the prepared state.
func TestTV2EndRetryWhilePrepared(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	e := newEnv(t, dir, clk)
	pe, err := e.c.InitProducerID(InitRequest{TransactionalID: "p", TimeoutMs: 10_000, ProducerID: -1, ProducerEpoch: -1, TransactionVersion: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.AddPartitions(AddPartitionsRequest{TransactionalID: "p", ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch,
		Partitions: []TopicPartition{tp0}, TransactionVersion: 2}); err != nil {
		t.Fatal(err)
	}
	if err := e.produce(tp0, pe, 0); err != nil {
		t.Fatal(err)
	}
	e.setFail(true)
	commit := EndRequest{TransactionalID: "p", ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, Commit: true, BumpEpoch: true}
	next, err := e.c.EndTxn(commit)
	if err != nil || next.Epoch != pe.Epoch+1 {
		t.Fatalf("EndTxn with markers failing = %+v, %v", next, err)
	}
	abort := commit
	abort.Commit = false
	check := func(c *Coordinator, when string) {
		t.Helper()
		if _, err := c.EndTxn(commit); !errors.Is(err, ErrConcurrentTransactions) {
			t.Fatalf("%s: retried commit while prepared: %v, want CONCURRENT_TRANSACTIONS", when, err)
		}
		if _, err := c.EndTxn(abort); !errors.Is(err, ErrInvalidTxnState) {
			t.Fatalf("%s: abort of the old epoch while prepared to commit: %v, want INVALID_TXN_STATE", when, err)
		}
	}
	check(e.c, "prepared")
	// The next transaction's EndTxn waits for the markers too.
	empty := EndRequest{TransactionalID: "p", ProducerID: next.ProducerID, ProducerEpoch: next.Epoch, BumpEpoch: true}
	if _, err := e.c.EndTxn(empty); !errors.Is(err, ErrConcurrentTransactions) {
		t.Fatalf("EndTxn of the next epoch while prepared: %v, want CONCURRENT_TRANSACTIONS", err)
	}
	e.close()

	e2 := newStoppedEnv(t, dir, clk)
	e2.setFail(true)
	e2.start() // loads the prepared state; its markers fail
	if d := e2.describe("p"); d.State != StatePrepareCommit {
		t.Fatalf("after recovery with markers failing: %v", d.State)
	}
	check(e2.c, "recovered")
	// A KIP-360 InitProducerId of the client that never saw the bump waits
	// for the markers too, as Kafka's coordinator answers it.
	reinit := InitRequest{TransactionalID: "p", TimeoutMs: 10_000, ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, TransactionVersion: 2}
	if _, err := e2.c.InitProducerID(reinit); !errors.Is(err, ErrConcurrentTransactions) {
		t.Fatalf("InitProducerId of the pre-bump epoch while prepared: %v, want CONCURRENT_TRANSACTIONS", err)
	}
	e2.setFail(false)
	if got, err := e2.c.EndTxn(commit); err != nil || got != next {
		t.Fatalf("retried commit once markers can be written = %+v, %v; want %+v", got, err, next)
	}
	if off := e2.data[tp0].Offsets(); off.LastStableOffset != 2 {
		t.Fatalf("%v after the markers: %+v", tp0, off)
	}
}
