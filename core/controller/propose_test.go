package controller

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A plan made while active must not be forwarded once leadership has moved:
// on a node that is not the active controller, proposeAsActive fails every
// record with ErrNotController and applies nothing, where proposeAll
// forwards (and the active controller refuses broker-state records from a
// peer, which once left a shutting-down broker waiting forever).
func TestProposeAsActiveRefusesOnAFollower(t *testing.T) {
	tc := newTestCluster(t, 3, 0)
	active := tc.active()
	var follower *testNode
	for _, n := range tc.nodes {
		if n != active {
			follower = n
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	br := follower.c.Image().Brokers[follower.id]
	state := &brokerStateRecord{NodeID: br.NodeID, Epoch: br.Epoch, Fenced: true}
	errs := follower.c.proposeAsActive(ctx, []record{state, state})
	if len(errs) != 2 {
		t.Fatalf("got %d errors for 2 records", len(errs))
	}
	for i, err := range errs {
		if !errors.Is(err, ErrNotController) || !retriable(err) {
			t.Errorf("record %d: %v, want a retriable ErrNotController", i, err)
		}
	}
	if got := active.c.Image().Brokers[follower.id]; got.Fenced {
		t.Errorf("broker %d was fenced by a refused plan", follower.id)
	}
	if errs := active.c.proposeAsActive(ctx, nil); len(errs) != 0 {
		t.Errorf("no records gave %v", errs)
	}
}
