package share

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestSimpleAssignorAndEpochs(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	topics := map[string]TopicInfo{"one": {Partitions: 1}, "three": {Partitions: 3}}
	var left []string
	g := NewGroups(GroupsConfig{}, c.now, func() map[string]TopicInfo { return topics }, func(_, m string) { left = append(left, m) })
	join := func(id string, subs ...string) HeartbeatResult {
		t.Helper()
		r, err := g.Heartbeat(HeartbeatRequest{GroupID: "g", MemberID: id, Subscribed: subs})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := join("a", "one", "three")
	if want := map[string][]int32{"one": {0}, "three": {0, 1, 2}}; !reflect.DeepEqual(a.Assignment, want) {
		t.Fatalf("a alone: %v", a.Assignment)
	}
	join("b", "one", "three")
	join("c", "one", "three")
	// Three members, one partition of "one": all share it; three
	// partitions of "three": one each.
	d, _ := g.Describe("g")
	for i, m := range d.Members {
		if !reflect.DeepEqual(m.Assignment, map[string][]int32{"one": {0}, "three": {int32(i)}}) {
			t.Fatalf("member %s: %v", m.MemberID, m.Assignment)
		}
	}
	// a heartbeats at the epoch it was last told and learns its new
	// assignment and epoch; an epoch it was never told is fenced.
	if _, err := g.Heartbeat(HeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: a.MemberEpoch + 100}); !errors.Is(err, ErrFencedMemberEpoch) {
		t.Fatalf("unknown epoch: %v", err)
	}
	ma := d.Members[0]
	r, err := g.Heartbeat(HeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: a.MemberEpoch})
	if err != nil || r.MemberEpoch != ma.MemberEpoch || !reflect.DeepEqual(r.Assignment, ma.Assignment) {
		t.Fatalf("a: %+v %v, described %+v", r, err, ma)
	}
	if _, err := g.Heartbeat(HeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: a.MemberEpoch}); !errors.Is(err, ErrFencedMemberEpoch) {
		t.Fatalf("epoch older than the answered one: %v", err)
	}
	if _, err := g.Heartbeat(HeartbeatRequest{GroupID: "g", MemberID: "zz", MemberEpoch: 3}); !errors.Is(err, ErrUnknownMemberID) {
		t.Fatalf("unknown member: %v", err)
	}
	// b and c stop heartbeating; a keeps on.
	c.advance(40 * time.Second)
	if _, err := g.Heartbeat(HeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: r.MemberEpoch}); err != nil {
		t.Fatal(err)
	}
	c.advance(10 * time.Second)
	d, _ = g.Describe("g")
	if len(d.Members) != 1 || d.Members[0].MemberID != "a" || len(left) != 2 {
		t.Fatalf("after session timeout: %+v, left %v", d.Members, left)
	}
	if err := g.Delete("g"); !errors.Is(err, ErrNonEmptyGroup) {
		t.Fatalf("delete non-empty: %v", err)
	}
	if _, err := g.Heartbeat(HeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: -1}); err != nil {
		t.Fatal(err)
	}
	if d, _ := g.Describe("g"); d.State != StateEmpty {
		t.Fatalf("state %s", d.State)
	}
	if err := g.Delete("g"); err != nil {
		t.Fatal(err)
	}
}

func TestSessionEpochs(t *testing.T) {
	s := NewSessions(1)
	tp := TopicPartition{Partition: 0}
	if _, _, err := s.Update(SessionUpdate{Group: "g", Member: "a", Epoch: 1}); !errors.Is(err, ErrShareSessionNotFound) {
		t.Fatalf("no session: %v", err)
	}
	if _, _, err := s.Update(SessionUpdate{Group: "g", Member: "a", Epoch: 0, AckOnly: true}); !errors.Is(err, ErrInvalidShareSessionEpoch) {
		t.Fatalf("ack opening: %v", err)
	}
	parts, _, err := s.Update(SessionUpdate{Group: "g", Member: "a", Epoch: 0, Add: []TopicPartition{tp}})
	if err != nil || len(parts) != 1 {
		t.Fatalf("open: %v %v", parts, err)
	}
	if _, _, err := s.Update(SessionUpdate{Group: "g", Member: "b", Epoch: 0}); !errors.Is(err, ErrShareSessionLimitReached) {
		t.Fatalf("over the limit: %v", err)
	}
	if _, _, err := s.Update(SessionUpdate{Group: "g", Member: "a", Epoch: 2}); !errors.Is(err, ErrInvalidShareSessionEpoch) {
		t.Fatalf("skipped epoch: %v", err)
	}
	parts, _, err = s.Update(SessionUpdate{Group: "g", Member: "a", Epoch: 1, Forget: []TopicPartition{tp}})
	if err != nil || len(parts) != 0 {
		t.Fatalf("forget: %v %v", parts, err)
	}
	if _, closed, err := s.Update(SessionUpdate{Group: "g", Member: "a", Epoch: -1}); err != nil || !closed || s.Len() != 0 {
		t.Fatalf("close: %v %v %d", closed, err, s.Len())
	}
}
