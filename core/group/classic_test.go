package group

import (
	"errors"
	"testing"
	"time"
)

// stableGroup brings n members into a stable group "g" and returns their
// ids (the leader first) and the generation.
func stableGroup(t *testing.T, e *env, n int, mods ...func(*JoinRequest)) ([]string, int32) {
	t.Helper()
	var ids []string
	var calls []*joinCall
	for i := 0; i < n; i++ {
		id, jc := e.newMember("g", mods...)
		jc.pending() // the initial delay holds the first rebalance
		ids, calls = append(ids, id), append(calls, jc)
	}
	e.clock.Advance(e.cfg.InitialRebalanceDelay * time.Duration(n+1))
	var leader string
	var gen int32
	for i, jc := range calls {
		r := jc.must()
		ids[i] = r.MemberID
		leader, gen = r.Leader, r.Generation
	}
	assignments := map[string][]byte{}
	for _, id := range ids {
		assignments[id] = []byte("assigned-" + id)
	}
	// Followers sync first and wait for the leader's assignment.
	var waits []<-chan SyncResponse
	var followers []string
	for _, id := range ids {
		if id == leader {
			continue
		}
		now, wait := e.sync("g", id, gen, nil)
		if _, ok := syncAnswer(t, now, wait); ok {
			t.Fatalf("follower %s answered before the leader synced", id)
		}
		waits, followers = append(waits, wait), append(followers, id)
	}
	now, wait := e.sync("g", leader, gen, assignments)
	if r, ok := syncAnswer(t, now, wait); !ok || r.Err != nil || string(r.Assignment) != "assigned-"+leader {
		t.Fatalf("leader sync = %+v, %v", r, ok)
	}
	for i, w := range waits {
		if r, ok := syncAnswer(t, SyncResponse{}, w); !ok || r.Err != nil || string(r.Assignment) != "assigned-"+followers[i] {
			t.Fatalf("follower sync = %+v, %v", r, ok)
		}
	}
	order := []string{leader}
	for _, id := range ids {
		if id != leader {
			order = append(order, id)
		}
	}
	return order, gen
}

func TestJoinSyncThreeMembers(t *testing.T) {
	e := newEnv(t, 3)
	ids, gen := stableGroup(t, e, 3)
	if gen != 1 {
		t.Fatalf("generation = %d, want 1", gen)
	}
	if st := e.state("g"); st != StateStable {
		t.Fatalf("state = %s, want Stable", st)
	}
	for _, id := range ids {
		if err := e.heartbeat("g", id, gen); err != nil {
			t.Fatalf("heartbeat %s: %v", id, err)
		}
	}
	d, _ := e.c.DescribeGroup("g")
	if d.Protocol != "range" || d.ProtocolType != "consumer" || len(d.Members) != 3 {
		t.Fatalf("describe = %+v", d)
	}
	for _, m := range d.Members {
		if string(m.Assignment) != "assigned-"+m.MemberID || m.ClientHost != "/127.0.0.1" {
			t.Fatalf("member = %+v", m)
		}
	}
}

func TestLeaderGetsMembersWithMetadata(t *testing.T) {
	e := newEnv(t, 1, func(c *Config) { c.InitialRebalanceDelay = 0 })
	id, jc := e.newMember("g")
	r := jc.must()
	if r.Leader != id || r.MemberID != id || r.Generation != 1 || len(r.Members) != 1 ||
		string(r.Members[0].Metadata) != string(consumerMeta("t")) || r.Protocol != "range" {
		t.Fatalf("join = %+v", r)
	}
}

func TestMemberIDRequiredOnlyWhenAsked(t *testing.T) {
	e := newEnv(t, 1, func(c *Config) { c.InitialRebalanceDelay = 0 })
	// JoinGroup v0-v3: a new member is admitted at once.
	jc := e.join(joinReq("g", "", func(r *JoinRequest) { r.RequireKnownMemberID = false }))
	r := jc.must()
	if r.MemberID == "" || r.Generation != 1 {
		t.Fatalf("join = %+v", r)
	}
}

func TestProtocolSelection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members [][]string
		want    string
		err     error
	}{
		{"one member, first choice", [][]string{{"sticky", "range"}}, "sticky", nil},
		{"majority of first choices", [][]string{{"range", "sticky"}, {"sticky", "range"}, {"sticky", "range"}}, "sticky", nil},
		{"only the common one", [][]string{{"roundrobin", "range"}, {"range"}}, "range", nil},
		{"nothing in common", [][]string{{"range"}, {"sticky"}}, "", ErrInconsistentGroupProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 1)
			var calls []*joinCall
			for i, names := range tc.members {
				var ps []Protocol
				for _, n := range names {
					ps = append(ps, Protocol{Name: n, Metadata: consumerMeta("t")})
				}
				jc := e.join(joinReq("g", "", func(r *JoinRequest) { r.Protocols = ps; r.RequireKnownMemberID = false }))
				if i == len(tc.members)-1 && tc.err != nil {
					if r, ok := jc.answer(); !ok || !errors.Is(r.Err, tc.err) {
						t.Fatalf("join = %+v, want %v", r, tc.err)
					}
					return
				}
				calls = append(calls, jc)
			}
			e.clock.Advance(time.Minute)
			for _, jc := range calls {
				if r := jc.must(); r.Protocol != tc.want {
					t.Fatalf("protocol = %q, want %q", r.Protocol, tc.want)
				}
			}
		})
	}
}

func TestInitialDelayExtendsWhileMembersArrive(t *testing.T) {
	e := newEnv(t, 1)
	_, a := e.newMember("g")
	e.clock.Advance(2 * time.Second)
	_, b := e.newMember("g")
	e.clock.Advance(3900 * time.Millisecond) // the first delay ended at 3s with a new member: wait until 6s
	a.pending()
	b.pending()
	e.clock.Advance(100 * time.Millisecond)
	if ra, rb := a.must(), b.must(); ra.Generation != 1 || rb.Generation != 1 {
		t.Fatalf("generations %d %d", ra.Generation, rb.Generation)
	}
}

func TestSessionTimeoutEvictsAndRebalances(t *testing.T) {
	e := newEnv(t, 1)
	ids, gen := stableGroup(t, e, 3)
	dead := ids[2]
	// Two members keep heartbeating; the third goes silent.
	for i := 0; i < 2; i++ {
		e.clock.Advance(4 * time.Second)
		for _, id := range ids[:2] {
			if err := e.heartbeat("g", id, gen); err != nil {
				t.Fatalf("heartbeat %s: %v", id, err)
			}
		}
	}
	e.clock.Advance(4 * time.Second)
	// 12s > the 10s session: the silent member is gone and a rebalance began.
	if err := e.heartbeat("g", ids[0], gen); !errors.Is(err, ErrRebalanceInProgress) {
		t.Fatalf("heartbeat after eviction = %v, want REBALANCE_IN_PROGRESS", err)
	}
	if err := e.heartbeat("g", dead, gen); !errors.Is(err, ErrUnknownMemberID) {
		t.Fatalf("evicted member heartbeat = %v, want UNKNOWN_MEMBER_ID", err)
	}
	a := e.join(joinReq("g", ids[0]))
	a.pending()
	b := e.join(joinReq("g", ids[1]))
	ra, rb := a.must(), b.must()
	if ra.Generation != gen+1 || rb.Generation != gen+1 || len(ra.Members)+len(rb.Members) != 2 {
		t.Fatalf("rejoin = %+v / %+v", ra, rb)
	}
}

func TestRebalanceTimeoutDropsMembersThatDoNotRejoin(t *testing.T) {
	e := newEnv(t, 1)
	ids, gen := stableGroup(t, e, 2)
	// The leader rejoins (a rebalance); the other member keeps its session
	// alive with heartbeats but never rejoins.
	jc := e.join(joinReq("g", ids[0]))
	jc.pending()
	for i := 0; i < 3; i++ {
		e.clock.Advance(5 * time.Second)
		if err := e.heartbeat("g", ids[1], gen); !errors.Is(err, ErrRebalanceInProgress) {
			t.Fatalf("heartbeat = %v", err)
		}
	}
	e.clock.Advance(4 * time.Second)
	jc.pending()
	e.clock.Advance(time.Second) // the 20s rebalance timeout
	r := jc.must()
	if r.Generation != gen+1 || len(r.Members) != 1 || r.Members[0].MemberID != ids[0] {
		t.Fatalf("join = %+v", r)
	}
}

func TestLeaveGroupRebalancesAndBatches(t *testing.T) {
	e := newEnv(t, 1)
	ids, gen := stableGroup(t, e, 3)
	errs, err := e.c.LeaveGroup("g", []LeavingMember{{MemberID: ids[2]}, {MemberID: "nobody"}})
	if err != nil || errs[0] != nil || !errors.Is(errs[1], ErrUnknownMemberID) {
		t.Fatalf("leave = %v, %v", errs, err)
	}
	if st := e.state("g"); st != StatePreparingRebalance {
		t.Fatalf("state = %s", st)
	}
	a, b := e.join(joinReq("g", ids[0])), e.join(joinReq("g", ids[1]))
	if a.must().Generation != gen+1 || b.must().Generation != gen+1 {
		t.Fatal("no new generation")
	}
	// Everyone leaves: the group is empty, one generation further.
	e.c.LeaveGroup("g", []LeavingMember{{MemberID: ids[0]}, {MemberID: ids[1]}})
	if st := e.state("g"); st != StateEmpty {
		t.Fatalf("state = %s, want Empty", st)
	}
}

func TestHeartbeatErrors(t *testing.T) {
	e := newEnv(t, 1)
	ids, gen := stableGroup(t, e, 1)
	for _, tc := range []struct {
		name   string
		req    HeartbeatRequest
		want   error
		wantOK bool
	}{
		{"ok", HeartbeatRequest{Group: "g", MemberID: ids[0], Generation: gen}, nil, true},
		{"empty group id", HeartbeatRequest{MemberID: ids[0], Generation: gen}, ErrInvalidGroupID, false},
		{"unknown group", HeartbeatRequest{Group: "other", MemberID: ids[0], Generation: gen}, ErrUnknownMemberID, false},
		{"unknown member", HeartbeatRequest{Group: "g", MemberID: "x", Generation: gen}, ErrUnknownMemberID, false},
		{"old generation", HeartbeatRequest{Group: "g", MemberID: ids[0], Generation: gen - 1}, ErrIllegalGeneration, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.c.Heartbeat(tc.req)
			if tc.wantOK != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSyncErrors(t *testing.T) {
	e := newEnv(t, 1)
	ids, gen := stableGroup(t, e, 1)
	other := "other"
	for _, tc := range []struct {
		name string
		req  SyncRequest
		want error
	}{
		{"unknown member", SyncRequest{Group: "g", MemberID: "x", Generation: gen}, ErrUnknownMemberID},
		{"old generation", SyncRequest{Group: "g", MemberID: ids[0], Generation: gen - 1}, ErrIllegalGeneration},
		{"other protocol", SyncRequest{Group: "g", MemberID: ids[0], Generation: gen, Protocol: &other}, ErrInconsistentGroupProtocol},
		{"no group id", SyncRequest{MemberID: ids[0], Generation: gen}, ErrInvalidGroupID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := e.c.SyncGroup(tc.req)
			if !errors.Is(r.Err, tc.want) {
				t.Fatalf("err = %v, want %v", r.Err, tc.want)
			}
		})
	}
}

func TestMembersThatDoNotSyncAreRemoved(t *testing.T) {
	e := newEnv(t, 1)
	_, a := e.newMember("g")
	_, b := e.newMember("g")
	e.clock.Advance(10 * time.Second)
	ra, rb := a.must(), b.must()
	leader := ra
	if rb.Leader == rb.MemberID {
		leader = rb
	}
	now, wait := e.sync("g", leader.MemberID, leader.Generation, map[string][]byte{ra.MemberID: {1}, rb.MemberID: {2}})
	if r, ok := syncAnswer(t, now, wait); !ok || r.Err != nil {
		t.Fatalf("leader sync = %+v", r)
	}
	// The follower never syncs: after the rebalance timeout it is dropped
	// and the group rebalances.
	for i := 0; i < 5; i++ {
		e.clock.Advance(5 * time.Second)
		e.heartbeat("g", leader.MemberID, leader.Generation)
	}
	if err := e.heartbeat("g", leader.MemberID, leader.Generation); !errors.Is(err, ErrRebalanceInProgress) {
		t.Fatalf("heartbeat = %v, want REBALANCE_IN_PROGRESS", err)
	}
	d, _ := e.c.DescribeGroup("g")
	if len(d.Members) != 1 {
		t.Fatalf("members = %+v", d.Members)
	}
}

func TestStaticMemberRejoinsWithoutRebalance(t *testing.T) {
	e := newEnv(t, 1)
	_, a := e.newMember("g", withInstance("i-a"))
	_, b := e.newMember("g", withInstance("i-b"))
	e.clock.Advance(10 * time.Second)
	ra, rb := a.must(), b.must()
	gen := ra.Generation
	leader := ra.Leader
	e.sync("g", leader, gen, map[string][]byte{ra.MemberID: []byte("A"), rb.MemberID: []byte("B")})
	follower := rb.MemberID
	if leader == rb.MemberID {
		follower = ra.MemberID
	}
	e.sync("g", follower, gen, nil)
	if st := e.state("g"); st != StateStable {
		t.Fatalf("state = %s", st)
	}
	// Member b restarts: it joins with its instance id and no member id.
	re := e.join(joinReq("g", "", withInstance("i-b")))
	r := re.must()
	if r.Generation != gen || r.MemberID == rb.MemberID || r.SkipAssignment {
		t.Fatalf("static rejoin = %+v", r)
	}
	if st := e.state("g"); st != StateStable {
		t.Fatalf("state after static rejoin = %s, want Stable", st)
	}
	s, w := e.sync("g", r.MemberID, gen, nil)
	if sr, ok := syncAnswer(t, s, w); !ok || string(sr.Assignment) != "B" {
		t.Fatalf("sync after rejoin = %+v", sr)
	}
	// The old member id is fenced.
	if err := e.c.Heartbeat(HeartbeatRequest{Group: "g", MemberID: rb.MemberID, InstanceID: strp("i-b"), Generation: gen}); !errors.Is(err, ErrFencedInstanceID) {
		t.Fatalf("old id heartbeat = %v, want FENCED_INSTANCE_ID", err)
	}
	// The static leader restarting learns it leads but skips the assignment.
	rl := e.join(joinReq("g", "", withInstance(instanceOf(ra, rb, leader)))).must()
	if !rl.SkipAssignment || rl.Leader != rl.MemberID || len(rl.Members) != 2 || rl.Generation != gen {
		t.Fatalf("static leader rejoin = %+v", rl)
	}
	// A static member leaving by instance id triggers a rebalance.
	errs, err := e.c.LeaveGroup("g", []LeavingMember{{InstanceID: strp("i-b")}})
	if err != nil || errs[0] != nil {
		t.Fatalf("leave = %v %v", errs, err)
	}
	if st := e.state("g"); st != StatePreparingRebalance {
		t.Fatalf("state = %s", st)
	}
}

func instanceOf(ra, rb JoinResponse, memberID string) string {
	if ra.MemberID == memberID {
		return "i-a"
	}
	return "i-b"
}

func strp(s string) *string { return &s }

func TestCooperativeRejoinKeepsOtherMembersWorking(t *testing.T) {
	// A cooperative client rejoins while the others are stable; the others
	// learn of the rebalance from their heartbeats and rejoin too.
	e := newEnv(t, 1)
	ids, gen := stableGroup(t, e, 3)
	// Its subscription now lists the partitions it still owns.
	owned := func(r *JoinRequest) {
		r.Protocols = []Protocol{{Name: "range", Metadata: append(consumerMeta("t"), 0)}}
	}
	first := e.join(joinReq("g", ids[1], owned))
	first.pending()
	for _, id := range []string{ids[0], ids[2]} {
		if err := e.heartbeat("g", id, gen); !errors.Is(err, ErrRebalanceInProgress) {
			t.Fatalf("heartbeat = %v", err)
		}
	}
	// Commits of the current generation are still accepted while preparing.
	if _, err := e.c.CommitOffsets(CommitRequest{Group: "g", MemberID: ids[0], Generation: gen, RetentionMs: -1,
		Partitions: []CommitPartition{{TopicPartition: TopicPartition{"t", 0}, Offset: 5, LeaderEpoch: -1}}}); err != nil {
		t.Fatalf("commit while preparing: %v", err)
	}
	// A follower rejoining with unchanged metadata while stable would get the
	// current generation back; here the group is rebalancing, so it waits.
	a, c := e.join(joinReq("g", ids[0])), e.join(joinReq("g", ids[2]))
	for _, jc := range []*joinCall{first, a, c} {
		if r := jc.must(); r.Generation != gen+1 {
			t.Fatalf("generation = %d", r.Generation)
		}
	}
}

func TestRefusedFirstJoinLeavesNoGroup(t *testing.T) {
	e := newEnv(t, 1)
	resp, _ := e.c.JoinGroup(joinReq("g", "", func(r *JoinRequest) { r.Protocols = nil }))
	if !errors.Is(resp.Err, ErrInconsistentGroupProtocol) {
		t.Fatalf("join = %+v", resp)
	}
	if _, err := e.c.DescribeGroup("g"); !errors.Is(err, ErrGroupIDNotFound) {
		t.Fatalf("describe = %v, want not found", err)
	}
	// A session timeout outside the bounds is refused before anything else.
	resp, _ = e.c.JoinGroup(joinReq("g", "", func(r *JoinRequest) { r.SessionTimeout = 2 * time.Minute }))
	if !errors.Is(resp.Err, ErrInvalidSessionTimeout) {
		t.Fatalf("join = %+v", resp)
	}
}
