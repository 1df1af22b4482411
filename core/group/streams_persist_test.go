package group

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// stabilise heartbeats every member with what it owns until none is sent
// a change, and returns each member's epoch and owned active tasks.
func (e *env) stabilise(t *testing.T, epochs map[string]int32, mods map[string]func(*StreamsHeartbeatRequest)) map[string][]StreamsTaskIDs {
	t.Helper()
	owned := map[string][]StreamsTaskIDs{}
	for id := range epochs {
		owned[id] = []StreamsTaskIDs{}
	}
	for i := 0; i < 8; i++ {
		for _, id := range sortedKeys(epochs) {
			r := e.shb(id, epochs[id], owned[id], func(r *StreamsHeartbeatRequest) {
				if m := mods[id]; m != nil {
					m(r)
				}
			})
			smust(t, r)
			epochs[id] = r.MemberEpoch
			if r.Active != nil {
				owned[id] = r.Active
			}
		}
	}
	return owned
}

func sortedKeys(m map[string]int32) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestStreamsGroupSurvivesRestart: the group's epoch, topology, members,
// target and current assignments are in __consumer_offsets, so after a
// restart of the coordinator the members carry on at their epochs with
// their tasks, a static member that left for a moment comes back to its
// tasks, and no rebalance happens.
func TestStreamsGroupSurvivesRestart(t *testing.T) {
	e := sgEnv(t)
	e.topics["app-counts-repartition"] = TopicInfo{ID: [16]byte{2}, Partitions: 4}
	e.topics["app-counts-changelog"] = TopicInfo{ID: [16]byte{3}, Partitions: 4}
	static := func(r *StreamsHeartbeatRequest) {
		r.InstanceID = ptr("B")
		if r.MemberEpoch == 0 {
			r.ProcessID = ptr("process-b")
			r.UserEndpoint = &StreamsEndpoint{Host: "b.example", Port: 7070}
			r.ClientTags = map[string]string{"zone": "z1"}
		}
	}
	mods := map[string]func(*StreamsHeartbeatRequest){"b": static}
	epochs := map[string]int32{"a": 0}
	e.stabilise(t, epochs, mods)
	epochs["b"] = 0
	owned := e.stabilise(t, epochs, mods)
	smust(t, e.shb("c", 0, nil))
	smust(t, e.shb("c", -1, nil)) // left: its records are tombstoned
	owned = e.stabilise(t, epochs, mods)
	before, err := e.c.DescribeStreamsGroup("app")
	if err != nil {
		t.Fatal(err)
	}
	if before.State != StateStable || epochs["a"] != before.Epoch || epochs["b"] != before.Epoch || len(before.Members) != 2 {
		t.Fatalf("before restart = %+v, epochs %v", before, epochs)
	}
	if err := e.commitAt("app", "a", epochs["a"]); err != nil {
		t.Fatal(err)
	}
	// b leaves for a moment as a static member; the restart keeps that.
	if r := e.shb("b", -2, nil, static); r.Err != nil {
		t.Fatalf("static leave: %v", r.Err)
	}
	before, _ = e.c.DescribeStreamsGroup("app")
	ep := before.Epoch
	for round := 0; round < 2; round++ {
		e.restart()
		after, err := e.c.DescribeStreamsGroup("app")
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !reflect.DeepEqual(after, before) {
			t.Fatalf("round %d: after restart\n%+v\nbefore\n%+v", round, after, before)
		}
	}
	// a carries on at its epoch: its whole assignment and the endpoints
	// are sent again, and nothing moves.
	ra := smust(t, e.shb("a", ep, owned["a"], func(r *StreamsHeartbeatRequest) { r.EndpointEpoch = 99 }))
	if ra.MemberEpoch != ep || !reflect.DeepEqual(ra.Active, owned["a"]) {
		t.Fatalf("a after restart: epoch %d active %v, want %d %v", ra.MemberEpoch, ra.Active, ep, owned["a"])
	}
	if len(ra.PartitionsByEndpoint) != 1 || ra.PartitionsByEndpoint[0].Endpoint.Host != "b.example" {
		t.Fatalf("partitions by endpoint after restart = %+v", ra.PartitionsByEndpoint)
	}
	if err := e.commitAt("app", "a", ep); err != nil {
		t.Fatalf("commit at the restored epoch: %v", err)
	}
	rb := smust(t, e.shb("b2", 0, nil, static))
	if rb.MemberEpoch != ep || !reflect.DeepEqual(rb.Active, owned["b"]) {
		t.Fatalf("static b after restart: epoch %d active %v, want %d %v", rb.MemberEpoch, rb.Active, ep, owned["b"])
	}
	if d, _ := e.c.DescribeStreamsGroup("app"); d.Epoch != ep || d.State != StateStable {
		t.Fatalf("group after the members came back: epoch %d state %s, want %d Stable", d.Epoch, d.State, ep)
	}
	// A member that does not come back is removed when its session ends,
	// and the removal survives the next restart.
	e.clock.Advance(e.cfg.StreamsSessionTimeout / 2)
	smust(t, e.shb("a", ep, owned["a"]))
	e.clock.Advance(e.cfg.StreamsSessionTimeout/2 + time.Millisecond)
	e.restart()
	d, _ := e.c.DescribeStreamsGroup("app")
	if len(d.Members) != 1 || d.Members[0].MemberID != "a" || d.Epoch != ep+1 {
		t.Fatalf("after b2's session ended and a restart = %+v", d)
	}
	// Deleting the empty group tombstones every record.
	if r := e.shb("a", -1, nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	if errs := e.c.DeleteGroups([]string{"app"}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	e.restart()
	if _, err := e.c.DescribeStreamsGroup("app"); !errors.Is(err, ErrGroupIDNotFound) {
		t.Fatalf("deleted group after restart: %v", err)
	}
}

// TestStreamsGroupRestartMidRevocation: a member restored while it still
// has tasks to revoke keeps them pending, and the new owner gets them only
// once they are revoked.
func TestStreamsGroupRestartMidRevocation(t *testing.T) {
	e := sgEnv(t)
	e.topics["app-counts-repartition"] = TopicInfo{ID: [16]byte{2}, Partitions: 4}
	e.topics["app-counts-changelog"] = TopicInfo{ID: [16]byte{3}, Partitions: 4}
	ra := smust(t, e.shb("a", 0, nil))
	all := ra.Active
	smust(t, e.shb("a", 1, all))
	rb := smust(t, e.shb("b", 0, nil))
	ra = smust(t, e.shb("a", 1, all))
	if ra.MemberEpoch != 1 || len(ra.Active) == len(all) {
		t.Fatalf("a must revoke: %+v", ra)
	}
	keep := ra.Active
	e.restart()
	if d, _ := e.c.DescribeStreamsGroup("app"); d.State != StateReconciling {
		t.Fatalf("state after restart %s, want Reconciling", d.State)
	}
	rb = smust(t, e.shb("b", rb.MemberEpoch, []StreamsTaskIDs{}))
	if len(rb.Active) != 0 {
		t.Fatalf("b got %v while a still owns it", rb.Active)
	}
	ra = smust(t, e.shb("a", 1, keep))
	if ra.MemberEpoch != 2 {
		t.Fatalf("a after revoking: epoch %d, want 2", ra.MemberEpoch)
	}
	rb = smust(t, e.shb("b", 2, []StreamsTaskIDs{}))
	if got := activeOf(rb); len(got["0"])+len(got["1"]) != 4 {
		t.Fatalf("b after a revoked: %v", got)
	}
}

func TestStreamsRecordsRoundTrip(t *testing.T) {
	topo := wordCount(3)
	topo.Subtopologies[0].SourceTopicRegex = []string{"in-.*"}
	topo.Subtopologies[0].CopartitionGroups = []StreamsCopartitionGroup{{SourceTopics: []int16{0}, SourceTopicRegex: []int16{0},
		RepartitionSourceTopics: []int16{}}}
	topo.Subtopologies[1].RepartitionSourceTopics[0].Partitions = 6
	topo.Subtopologies[1].RepartitionSourceTopics[0].ReplicationFactor = 3
	got, err := decodeStreamsTopology(encodeStreamsTopology(topo))
	if err != nil || !sameTopology(got, topo) {
		t.Fatalf("topology round trip = %+v, %v\nwant %+v", got, err, topo)
	}
	mv := streamsMemberValue{instanceID: ptr("i"), clientID: "c", clientHost: "/1.2.3.4", rebalanceTimeoutMs: 30000,
		topologyEpoch: 3, processID: "p", endpoint: &StreamsEndpoint{Host: "h", Port: 65535}, clientTags: map[string]string{"a": "b"}}
	if m, err := decodeStreamsMember(encodeStreamsMember(mv)); err != nil || !reflect.DeepEqual(m, mv) {
		t.Fatalf("member round trip = %+v, %v", m, err)
	}
	mv.endpoint, mv.clientTags, mv.instanceID = nil, nil, nil
	if m, err := decodeStreamsMember(encodeStreamsMember(mv)); err != nil || !reflect.DeepEqual(m, mv) {
		t.Fatalf("member round trip without endpoint = %+v, %v", m, err)
	}
	cv := streamsCurrentValue{epoch: 4, previousEpoch: 3, state: kafkaStateUnrevoked,
		assigned: streamsTasks{active: taskSetOf(map[string][]int32{"0": {1, 2}}), standby: taskSet{}, warmup: taskSetOf(map[string][]int32{"1": {0}})},
		revoking: streamsTasks{active: taskSetOf(map[string][]int32{"0": {3}}), standby: taskSet{}, warmup: taskSet{}}}
	if c, err := decodeStreamsCurrent(encodeStreamsCurrent(cv)); err != nil || !reflect.DeepEqual(c, cv) {
		t.Fatalf("current assignment round trip = %+v, %v", c, err)
	}
	md := streamsMetadataValue{epoch: 7, metaHash: 1 << 63, standbyReplicas: 2}
	if v, err := decodeStreamsMetadata(encodeStreamsMetadata(md)); err != nil || v != md {
		t.Fatalf("metadata round trip = %+v, %v", v, err)
	}
	k, err := decodeKey(encodeStreamsKey(keyStreamsGroupCurrentAssignment, "g", "m"))
	if err != nil || k.kind != kindStreams || k.group != "g" || k.member != "m" {
		t.Fatalf("key = %+v, %v", k, err)
	}
	if err := decodeStreamsValue(keyStreamsGroupTopology, []byte{0, 0, 1}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated topology: %v, want ErrCorrupt", err)
	}
}

// TestStreamsGroupSteadyHeartbeatWritesNothing: a heartbeat that changes
// nothing appends no record to __consumer_offsets.
func TestStreamsGroupSteadyHeartbeatWritesNothing(t *testing.T) {
	e := sgEnv(t)
	e.topics["app-counts-repartition"] = TopicInfo{ID: [16]byte{2}, Partitions: 4}
	e.topics["app-counts-changelog"] = TopicInfo{ID: [16]byte{3}, Partitions: 4}
	epochs := map[string]int32{"a": 0, "b": 0}
	owned := e.stabilise(t, epochs, nil)
	end := func() int64 {
		var n int64
		for _, p := range e.parts {
			n += p.Log().LogEndOffset()
		}
		return n
	}
	before := end()
	for i := 0; i < 5; i++ {
		for _, id := range []string{"a", "b"} {
			smust(t, e.shb(id, epochs[id], owned[id]))
		}
	}
	if got := end(); got != before {
		t.Fatalf("steady heartbeats appended %d records", got-before)
	}
}
