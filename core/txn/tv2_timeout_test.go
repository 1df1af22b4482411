package txn

import (
	"errors"
	"testing"
	"time"
)

// Under transaction version 2 an EndTxn at the epoch before the last bump
// is either a retry whose answer was lost, or a producer whose transaction
// the coordinator aborted past its timeout (which bumps the epoch too). A
// commit then is INVALID_TXN_STATE, as in Kafka 4.1 (franz-go recovers from
// it; later Kafka answers PRODUCER_FENCED, which franz-go treats as fatal).
func TestTV2EndAfterCoordinatorAbort(t *testing.T) {
	tests := []struct {
		name    string
		timeout bool // the coordinator aborts the transaction first
		first   *bool
		commit  bool
		want    error
		reload  bool // the coordinator reloads its partition before the second EndTxn
	}{
		{"commit after a timeout abort is invalid", true, nil, true, ErrInvalidTxnState, false},
		{"abort after a timeout abort succeeds", true, nil, false, nil, false},
		{"retried commit succeeds", false, ptr(true), true, nil, false},
		{"retried abort succeeds", false, ptr(false), false, nil, false},
		{"abort after a commit is invalid", false, ptr(true), false, ErrInvalidTxnState, false},
		{"retried commit after a reload succeeds", false, ptr(true), true, nil, true},
		{"retried abort after a reload succeeds", false, ptr(false), false, nil, true},
		{"commit after a timeout abort and a reload is invalid", true, nil, true, ErrInvalidTxnState, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			e := newEnv(t, t.TempDir(), clk)
			pe, err := e.c.InitProducerID(InitRequest{TransactionalID: "tv2", TimeoutMs: 10_000, ProducerID: -1, ProducerEpoch: -1, TransactionVersion: 2})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.add("tv2", pe, tp0); err != nil {
				t.Fatal(err)
			}
			if err := e.produce(tp0, pe, 0); err != nil {
				t.Fatal(err)
			}
			end := func(commit bool) (ProducerIDAndEpoch, error) {
				return e.c.EndTxn(EndRequest{TransactionalID: "tv2", ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch,
					Commit: commit, BumpEpoch: true})
			}
			if tc.timeout {
				clk.Advance(10 * time.Second)
				e.c.AbortTimedOut()
				if d := e.describe("tv2"); d.State != StateCompleteAbort || d.ProducerEpoch != pe.Epoch+1 {
					t.Fatalf("after the timeout: %+v", d)
				}
			} else if _, err := end(*tc.first); err != nil {
				t.Fatal(err)
			}
			if tc.reload {
				e.c.Close()
				e.start()
			}
			got, err := end(tc.commit)
			if !errors.Is(err, tc.want) {
				t.Fatalf("EndTxn(commit=%v) = %v, want %v", tc.commit, err, tc.want)
			}
			if err == nil && (got.ProducerID != pe.ProducerID || got.Epoch != pe.Epoch+1) {
				t.Fatalf("EndTxn answered %+v, want epoch %d", got, pe.Epoch+1)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
