package txn

import (
	"errors"
	"testing"
	"time"
)

// Transactional ids idle past transactional.id.expiration.ms are
// forgotten, and stay forgotten after the coordinator reloads its
// partition; ids with an open transaction, or changed recently, stay.
func TestExpireTransactionalIDs(t *testing.T) {
	week := DefaultConfig().IDExpiration
	tests := []struct {
		name    string
		setup   func(e *env, id string) // leaves id in some state
		advance time.Duration
		expired bool
	}{
		{"empty and idle", func(e *env, id string) { e.init(id) }, week, true},
		{"empty, not yet", func(e *env, id string) { e.init(id) }, week - time.Millisecond, false},
		{"committed and idle", func(e *env, id string) {
			pe := e.init(id)
			if err := e.add(id, pe, tp0); err != nil {
				e.t.Fatal(err)
			}
			if _, err := e.c.EndTxn(EndRequest{TransactionalID: id, ProducerID: pe.ProducerID, ProducerEpoch: pe.Epoch, Commit: true}); err != nil {
				e.t.Fatal(err)
			}
		}, week, true},
		{"open transaction is kept", func(e *env, id string) {
			pe := e.init(id)
			if err := e.add(id, pe, tp0); err != nil {
				e.t.Fatal(err)
			}
		}, week, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, clk := t.TempDir(), newClock()
			e := newEnv(t, dir, clk)
			tc.setup(e, "app")
			e.init("other") // the untouched neighbour of the id
			clk.Advance(tc.advance)
			e.init("other") // touched now: never expired here
			want := 0
			if tc.expired {
				want = 1
			}
			if n := e.c.ExpireTransactionalIDs(); n != want {
				t.Fatalf("expired %d ids, want %d", n, want)
			}
			for round := 0; round < 2; round++ {
				_, err := e.c.Describe("app")
				if gone := errors.Is(err, ErrTransactionalIDNotFound); gone != tc.expired {
					t.Fatalf("round %d: Describe(app) err %v, expired %v", round, err, tc.expired)
				}
				if _, err := e.c.Describe("other"); err != nil {
					t.Fatalf("round %d: Describe(other): %v", round, err)
				}
				// Reload from __transaction_state: the tombstone keeps it gone.
				e.c.Close()
				e.start()
			}
		})
	}
}
