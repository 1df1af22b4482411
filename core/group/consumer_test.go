package group

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"
)

var topicT = [16]byte{1}

func cgEnv(t *testing.T) *env {
	e := newEnv(t, 1)
	e.topics["t"] = TopicInfo{ID: topicT, Partitions: 6}
	return e
}

// hb sends a heartbeat; owned nil means "unchanged".
func (e *env) hb(member string, epoch int32, owned []int32, mods ...func(*ConsumerHeartbeatRequest)) ConsumerHeartbeatResponse {
	r := ConsumerHeartbeatRequest{Group: "cg", MemberID: member, MemberEpoch: epoch, RebalanceTimeout: -1, ClientMemberID: true,
		ClientID: "c", ClientHost: "/127.0.0.1"}
	if epoch == 0 {
		r.SubscribedTopics, r.RebalanceTimeout, r.Owned = []string{"t"}, 10*time.Second, []TopicPartitions{}
	}
	if owned != nil {
		r.Owned = []TopicPartitions{{TopicID: topicT, Partitions: owned}}
	}
	for _, m := range mods {
		m(&r)
	}
	return e.c.ConsumerHeartbeat(r)
}

func parts(r ConsumerHeartbeatResponse) []int32 {
	if r.Assignment == nil {
		return nil
	}
	out := []int32{}
	for _, tp := range r.Assignment {
		out = append(out, tp.Partitions...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func must(t *testing.T, r ConsumerHeartbeatResponse) ConsumerHeartbeatResponse {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("heartbeat: %v", r.Err)
	}
	return r
}

func TestConsumerGroupJoinRevokeAndReconcile(t *testing.T) {
	e := cgEnv(t)
	a := must(t, e.hb("a", 0, nil))
	if a.MemberEpoch != 1 || fmt.Sprint(parts(a)) != "[0 1 2 3 4 5]" || a.HeartbeatInterval != 5*time.Second {
		t.Fatalf("a joined = %+v", a)
	}
	b := must(t, e.hb("b", 0, nil))
	// b is at the new epoch but a still owns everything: nothing yet.
	if b.MemberEpoch != 2 || len(parts(b)) != 0 {
		t.Fatalf("b joined = %+v", b)
	}
	d, _ := e.c.DescribeConsumerGroup("cg")
	if d.State != StateReconciling || d.Epoch != 2 {
		t.Fatalf("describe = %+v", d)
	}
	// a is told to keep three: it stays at epoch 1 until it revokes.
	a = must(t, e.hb("a", 1, nil))
	if a.MemberEpoch != 1 || len(parts(a)) != 3 {
		t.Fatalf("a revoking = %+v", a)
	}
	kept := parts(a)
	// Commits from a still work at its epoch.
	if _, err := e.c.CommitOffsets(CommitRequest{Group: "cg", MemberID: "a", Generation: 1, RetentionMs: -1,
		Partitions: []CommitPartition{{TopicPartition: t0, Offset: 1, LeaderEpoch: -1}}}); err != nil {
		t.Fatalf("commit while revoking: %v", err)
	}
	a = must(t, e.hb("a", 1, kept))
	if a.MemberEpoch != 2 {
		t.Fatalf("a after revoking = %+v", a)
	}
	b = must(t, e.hb("b", 2, []int32{}))
	if len(parts(b)) != 3 {
		t.Fatalf("b after a revoked = %+v", b)
	}
	for _, p := range parts(b) {
		for _, k := range kept {
			if p == k {
				t.Fatalf("partition %d given to both", p)
			}
		}
	}
	must(t, e.hb("b", 2, parts(b)))
	if d, _ := e.c.DescribeConsumerGroup("cg"); d.State != StateStable || len(d.Members) != 2 {
		t.Fatalf("describe = %+v", d)
	}
	// A quiet heartbeat carries no assignment.
	if r := must(t, e.hb("a", 2, nil)); r.Assignment != nil {
		t.Fatalf("unchanged assignment sent again: %+v", r)
	}
	// b leaves: a gets everything at a new epoch.
	if r := e.hb("b", -1, nil); r.Err != nil || r.MemberEpoch != -1 {
		t.Fatalf("leave = %+v", r)
	}
	a = must(t, e.hb("a", 2, nil))
	if a.MemberEpoch != 3 || len(parts(a)) != 6 {
		t.Fatalf("a after b left = %+v", a)
	}
	l, _ := e.c.ListGroups(nil, []string{"consumer"})
	if len(l) != 1 || l[0].Type != TypeConsumer || l[0].State != StateStable {
		t.Fatalf("list = %+v", l)
	}
}

func TestConsumerGroupSessionAndRevocationTimeouts(t *testing.T) {
	e := cgEnv(t)
	must(t, e.hb("a", 0, nil))
	must(t, e.hb("b", 0, nil))
	// a never revokes: after its 10s rebalance timeout it is fenced.
	must(t, e.hb("a", 1, nil))
	e.clock.Advance(10 * time.Second)
	if r := e.hb("a", 1, nil); !errors.Is(r.Err, ErrUnknownMemberID) {
		t.Fatalf("a after the revocation timeout = %+v", r)
	}
	b := must(t, e.hb("b", 2, []int32{}))
	if len(parts(b)) != 6 {
		t.Fatalf("b = %+v", b)
	}
	// b goes silent: after the 45s session it is gone and the group is empty.
	e.clock.Advance(46 * time.Second)
	if d, _ := e.c.DescribeConsumerGroup("cg"); d.State != StateEmpty || len(d.Members) != 0 {
		t.Fatalf("describe = %+v", d)
	}
}

func TestConsumerGroupHeartbeatErrors(t *testing.T) {
	e := cgEnv(t)
	must(t, e.hb("a", 0, nil))
	regex := "("
	assignor := "sticky"
	for _, tc := range []struct {
		name string
		req  func() ConsumerHeartbeatResponse
		want error
	}{
		{"unknown member", func() ConsumerHeartbeatResponse { return e.hb("x", 3, nil) }, ErrUnknownMemberID},
		{"epoch from the future", func() ConsumerHeartbeatResponse { return e.hb("a", 7, nil) }, ErrFencedMemberEpoch},
		{"empty group id", func() ConsumerHeartbeatResponse {
			return e.hb("a", 1, nil, func(r *ConsumerHeartbeatRequest) { r.Group = "" })
		}, ErrInvalidRequest},
		{"no member id in v1", func() ConsumerHeartbeatResponse { return e.hb("", 0, nil) }, ErrInvalidRequest},
		{"join without a subscription", func() ConsumerHeartbeatResponse {
			return e.hb("z", 0, nil, func(r *ConsumerHeartbeatRequest) { r.SubscribedTopics = nil })
		}, ErrInvalidRequest},
		{"join owning partitions", func() ConsumerHeartbeatResponse { return e.hb("z", 0, []int32{1}) }, ErrInvalidRequest},
		{"bad regular expression", func() ConsumerHeartbeatResponse {
			return e.hb("z", 0, nil, func(r *ConsumerHeartbeatRequest) { r.SubscribedRegex = &regex })
		}, ErrInvalidRegularExpression},
		{"unknown assignor", func() ConsumerHeartbeatResponse {
			return e.hb("z", 0, nil, func(r *ConsumerHeartbeatRequest) { r.ServerAssignor = &assignor })
		}, ErrUnsupportedAssignor},
		{"classic group with members", func() ConsumerHeartbeatResponse {
			stableGroup(t, e, 1)
			return e.hb("z", 0, nil, func(r *ConsumerHeartbeatRequest) { r.Group = "g" })
		}, ErrGroupIDNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := tc.req(); !errors.Is(r.Err, tc.want) {
				t.Fatalf("err = %v, want %v", r.Err, tc.want)
			}
		})
	}
	// A classic JoinGroup into the consumer group is refused.
	r, _ := e.c.JoinGroup(joinReq("cg", ""))
	if !errors.Is(r.Err, ErrInconsistentGroupProtocol) {
		t.Fatalf("classic join = %+v", r)
	}
	// Offset commits check the member epoch.
	for _, tc := range []struct {
		gen  int32
		want error
	}{{1, nil}, {0, ErrStaleMemberEpoch}, {2, ErrFencedMemberEpoch}} {
		_, err := e.c.CommitOffsets(CommitRequest{Group: "cg", MemberID: "a", Generation: tc.gen, RetentionMs: -1,
			Partitions: []CommitPartition{{TopicPartition: t0, Offset: 1, LeaderEpoch: -1}}})
		if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
			t.Fatalf("commit at epoch %d = %v, want %v", tc.gen, err, tc.want)
		}
	}
}

func TestConsumerGroupStaticMemberReturns(t *testing.T) {
	e := cgEnv(t)
	inst := func(id string) func(*ConsumerHeartbeatRequest) {
		return func(r *ConsumerHeartbeatRequest) { r.InstanceID = &id }
	}
	must(t, e.hb("a1", 0, nil, inst("A")))
	must(t, e.hb("b1", 0, nil, inst("B")))
	a := must(t, e.hb("a1", 1, nil))
	must(t, e.hb("a1", 1, parts(a)))
	b := must(t, e.hb("b1", 2, []int32{}))
	must(t, e.hb("b1", 2, parts(b)))
	before, _ := e.c.DescribeConsumerGroup("cg")
	// b's process restarts: it leaves for a moment and comes back with a new
	// member id and the same instance id.
	if r := e.hb("b1", -2, nil, inst("B")); r.Err != nil {
		t.Fatalf("static leave = %+v", r)
	}
	if r := e.hb("b2", 0, nil, inst("A")); !errors.Is(r.Err, ErrUnreleasedInstanceID) {
		t.Fatalf("stealing a live instance id = %+v", r)
	}
	b2 := must(t, e.hb("b2", 0, nil, inst("B")))
	if fmt.Sprint(parts(b2)) != fmt.Sprint(parts(b)) || b2.MemberEpoch != 2 {
		t.Fatalf("returning static member = %+v, had %v", b2, parts(b))
	}
	after, _ := e.c.DescribeConsumerGroup("cg")
	if after.Epoch != before.Epoch {
		t.Fatalf("group epoch moved from %d to %d", before.Epoch, after.Epoch)
	}
}

func TestConsumerGroupFollowsPartitionChanges(t *testing.T) {
	e := cgEnv(t)
	must(t, e.hb("a", 0, nil))
	e.topics["t"] = TopicInfo{ID: topicT, Partitions: 8}
	a := must(t, e.hb("a", 1, nil))
	if a.MemberEpoch != 2 || len(parts(a)) != 8 {
		t.Fatalf("after growing the topic = %+v", a)
	}
}

func TestConsumerGroupSurvivesRestart(t *testing.T) {
	e := cgEnv(t)
	inst := func(id string) func(*ConsumerHeartbeatRequest) {
		return func(r *ConsumerHeartbeatRequest) { r.InstanceID = &id }
	}
	a := must(t, e.hb("a", 0, nil))
	must(t, e.hb("a", 1, parts(a)))
	must(t, e.hb("b", 0, nil, inst("B")))
	a = must(t, e.hb("a", 1, parts(a))) // a must give up partitions
	if a.MemberEpoch != 1 {
		t.Fatalf("a before revoking = %+v", a)
	}
	a = must(t, e.hb("a", 1, []int32{0, 1, 2}))
	b := must(t, e.hb("b", 2, []int32{}))
	must(t, e.hb("b", 2, parts(b)))
	must(t, e.hb("c", 0, nil))
	must(t, e.hb("c", -1, nil)) // left: its records are tombstoned
	// a and b reconcile to the group epoch.
	epochs := map[string]int32{"a": 1, "b": 2}
	for i := 0; i < 4; i++ {
		for _, id := range []string{"a", "b"} {
			d, _ := e.c.DescribeConsumerGroup("cg")
			var owned []int32
			for _, m := range d.Members {
				if m.MemberID == id {
					owned = append([]int32{}, m.Assignment["t"]...)
				}
			}
			epochs[id] = must(t, e.hb(id, epochs[id], owned)).MemberEpoch
		}
	}
	before, err := e.c.DescribeConsumerGroup("cg")
	if err != nil {
		t.Fatal(err)
	}
	if before.State != StateStable || epochs["a"] != before.Epoch || epochs["b"] != before.Epoch {
		t.Fatalf("before restart = %+v, epochs %v", before, epochs)
	}
	if _, err := e.c.CommitOffsets(CommitRequest{Group: "cg", MemberID: "a", Generation: epochs["a"], RetentionMs: -1,
		Partitions: []CommitPartition{{TopicPartition: t0, Offset: 4, LeaderEpoch: -1}}}); err != nil {
		t.Fatal(err)
	}
	// b leaves for a moment as a static member; the restart keeps that.
	if r := e.hb("b", -2, nil, inst("B")); r.Err != nil {
		t.Fatalf("static leave = %+v", r)
	}
	before, _ = e.c.DescribeConsumerGroup("cg")
	ep := before.Epoch

	for round := 0; round < 2; round++ {
		e.restart()
		after, err := e.c.DescribeConsumerGroup("cg")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(after, before) {
			t.Fatalf("round %d: after restart\n%+v\nbefore\n%+v", round, after, before)
		}
		if got := e.fetched("cg"); got[t0] != 4 {
			t.Fatalf("offsets = %v", got)
		}
	}
	// Members carry on at their epochs with their partitions: no rebalance.
	a2 := must(t, e.hb("a", ep, nil))
	if a2.MemberEpoch != ep || fmt.Sprint(parts(a2)) != fmt.Sprint(before.Members[0].Assignment["t"]) {
		t.Fatalf("a after restart = %+v, want epoch %d and %v", a2, ep, before.Members[0].Assignment)
	}
	b2 := must(t, e.hb("b2", 0, nil, inst("B")))
	if b2.MemberEpoch != ep || fmt.Sprint(parts(b2)) != fmt.Sprint(before.Members[1].Assignment["t"]) {
		t.Fatalf("static b after restart = %+v, want %v", b2, before.Members[1].Assignment)
	}
	if d, _ := e.c.DescribeConsumerGroup("cg"); d.Epoch != before.Epoch {
		t.Fatalf("group epoch moved from %d to %d", before.Epoch, d.Epoch)
	}
	// A member that does not come back is removed when its session ends,
	// and its removal survives the next restart.
	e.clock.Advance(e.cfg.ConsumerSessionTimeout / 2)
	must(t, e.hb("a", ep, nil))
	e.clock.Advance(e.cfg.ConsumerSessionTimeout/2 + time.Millisecond)
	e.restart()
	d, _ := e.c.DescribeConsumerGroup("cg")
	if len(d.Members) != 1 || d.Members[0].MemberID != "a" || d.Epoch != before.Epoch+1 {
		t.Fatalf("after b2's session ended and a restart = %+v", d)
	}
	// Deleting the empty group tombstones every record.
	must(t, e.hb("a", -1, nil))
	if errs := e.c.DeleteGroups([]string{"cg"}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	e.restart()
	if _, err := e.c.DescribeConsumerGroup("cg"); !errors.Is(err, ErrGroupIDNotFound) {
		t.Fatalf("deleted group after restart: %v", err)
	}
}

func ptr(s string) *string { return &s }
