package controller

import (
	"context"
	"errors"
	"fmt"
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

// Plans refused for a stale partition epoch are planned again, at most
// maxPlanAttempts times, and only those; other outcomes stay as they are.
func TestRetryStalePlans(t *testing.T) {
	c := newCluster(t, 1)
	stale := fmt.Errorf("controller: %w: 3, the partition is at 4", ErrInvalidUpdateVersion)
	other := fmt.Errorf("controller: %w", ErrUnknownTopic)
	for _, tc := range []struct {
		name     string
		failures []int // how many attempts fail stale, per request
		want     []int // attempts each request sees
		wantErr  []error
	}{
		{"none stale", []int{0, 0}, []int{1, 1}, []error{nil, nil}},
		{"one stale once", []int{1, 0}, []int{2, 1}, []error{nil, nil}},
		{"stale every time", []int{99}, []int{maxPlanAttempts}, []error{ErrInvalidUpdateVersion}},
		{"other errors are final", []int{-1}, []int{1}, []error{ErrUnknownTopic}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := make([]error, len(tc.failures))
			seen := make([]int, len(tc.failures))
			todo := make([]int, len(tc.failures))
			for i := range todo {
				todo[i] = i
			}
			retryStalePlans(context.Background(), c, todo, errs, func(todo []int) {
				for _, i := range todo {
					seen[i]++
					switch {
					case tc.failures[i] < 0:
						errs[i] = other
					case seen[i] <= tc.failures[i]:
						errs[i] = stale
					default:
						errs[i] = nil
					}
				}
			})
			for i := range seen {
				if seen[i] != tc.want[i] || !errors.Is(errs[i], tc.wantErr[i]) && (errs[i] != nil || tc.wantErr[i] != nil) {
					t.Errorf("request %d: %d attempts, error %v; want %d, %v", i, seen[i], errs[i], tc.want[i], tc.wantErr[i])
				}
			}
		})
	}
}
