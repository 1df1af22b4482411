package group

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// wordCount is a two-subtopology topology like Kafka Streams' word count:
// subtopology 0 reads the input and writes a repartition topic that
// subtopology 1 reads into a store with a changelog.
func wordCount(epoch int32) *StreamsTopology {
	return &StreamsTopology{Epoch: epoch, Subtopologies: []StreamsSubtopology{
		{ID: "0", SourceTopics: []string{"input"}, RepartitionSinkTopics: []string{"app-counts-repartition"}},
		{ID: "1", RepartitionSourceTopics: []StreamsTopicInfo{{Name: "app-counts-repartition",
			Configs: map[string]string{"cleanup.policy": "delete"}}},
			StateChangelogTopics: []StreamsTopicInfo{{Name: "app-counts-changelog",
				Configs: map[string]string{"cleanup.policy": "compact"}}}},
	}}
}

func sgEnv(t *testing.T) *env {
	e := newEnv(t, 1, func(c *Config) {
		c.StreamsSessionTimeout = 45 * time.Second
		c.StreamsHeartbeatInterval = 5 * time.Second
	})
	e.topics["input"] = TopicInfo{ID: [16]byte{1}, Partitions: 4}
	return e
}

func (e *env) shb(member string, epoch int32, active []StreamsTaskIDs, mods ...func(*StreamsHeartbeatRequest)) StreamsHeartbeatResponse {
	r := StreamsHeartbeatRequest{Group: "app", MemberID: member, MemberEpoch: epoch, RebalanceTimeout: -1, Active: active}
	if epoch == 0 {
		r.RebalanceTimeout, r.Topology, r.ProcessID = 30*time.Second, wordCount(0), ptr("process-"+member)
	}
	if active != nil {
		r.Standby, r.Warmup = []StreamsTaskIDs{}, []StreamsTaskIDs{}
	}
	for _, m := range mods {
		m(&r)
	}
	return e.c.StreamsHeartbeat(r)
}

func activeOf(r StreamsHeartbeatResponse) map[string][]int32 {
	if r.Active == nil {
		return nil
	}
	out := map[string][]int32{}
	for _, t := range r.Active {
		out[t.Subtopology] = t.Partitions
	}
	return out
}

func smust(t *testing.T, r StreamsHeartbeatResponse) StreamsHeartbeatResponse {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("heartbeat: %v", r.Err)
	}
	return r
}

func statusCodes(r StreamsHeartbeatResponse) []int8 {
	var out []int8
	for _, s := range r.Status {
		out = append(out, s.Code)
	}
	return out
}

func TestStreamsGroupInternalTopicsAndMissingSources(t *testing.T) {
	e := sgEnv(t)
	delete(e.topics, "input")
	r := smust(t, e.shb("a", 0, nil))
	if got := statusCodes(r); !reflect.DeepEqual(got, []int8{StreamsStatusMissingSourceTopics}) || r.Status[0].Detail != "Source topics input are missing." {
		t.Fatalf("status = %+v, want MISSING_SOURCE_TOPICS", r.Status)
	}
	if r.MemberEpoch != 1 || len(r.Active) != 0 || len(r.Create) != 0 || e.state("app") != StateNotReady {
		t.Fatalf("epoch %d active %v create %v state %s", r.MemberEpoch, r.Active, r.Create, e.state("app"))
	}
	// The input appears: the internal topics are to be created, with the
	// input's partition count and the configs the topology gives.
	e.topics["input"] = TopicInfo{ID: [16]byte{1}, Partitions: 4}
	r = smust(t, e.shb("a", 1, []StreamsTaskIDs{}))
	if got := statusCodes(r); !reflect.DeepEqual(got, []int8{StreamsStatusMissingInternalTopics}) {
		t.Fatalf("status = %+v, want MISSING_INTERNAL_TOPICS", r.Status)
	}
	want := []StreamsTopicInfo{
		{Name: "app-counts-repartition", Partitions: 4, Configs: map[string]string{"cleanup.policy": "delete"}},
		{Name: "app-counts-changelog", Partitions: 4, Configs: map[string]string{"cleanup.policy": "compact"}},
	}
	if !reflect.DeepEqual(r.Create, want) {
		t.Fatalf("create = %+v, want %+v", r.Create, want)
	}
	e.topics["app-counts-repartition"] = TopicInfo{ID: [16]byte{2}, Partitions: 4}
	e.topics["app-counts-changelog"] = TopicInfo{ID: [16]byte{3}, Partitions: 4}
	r = smust(t, e.shb("a", r.MemberEpoch, []StreamsTaskIDs{}))
	if len(r.Status) != 0 || len(r.Create) != 0 {
		t.Fatalf("status %+v create %+v after the topics exist", r.Status, r.Create)
	}
	if got := activeOf(r); !reflect.DeepEqual(got, map[string][]int32{"0": {0, 1, 2, 3}, "1": {0, 1, 2, 3}}) {
		t.Fatalf("active = %v", got)
	}
	// A changelog with the wrong partition count is reported.
	e.topics["app-counts-changelog"] = TopicInfo{ID: [16]byte{3}, Partitions: 2}
	r = smust(t, e.shb("a", r.MemberEpoch, nil))
	if got := statusCodes(r); !reflect.DeepEqual(got, []int8{StreamsStatusIncorrectlyPartitionedTopics}) {
		t.Fatalf("status = %+v, want INCORRECTLY_PARTITIONED_TOPICS", r.Status)
	}
}

func TestStreamsGroupRevokeBeforeAssign(t *testing.T) {
	e := sgEnv(t)
	e.topics["app-counts-repartition"] = TopicInfo{ID: [16]byte{2}, Partitions: 4}
	e.topics["app-counts-changelog"] = TopicInfo{ID: [16]byte{3}, Partitions: 4}
	ra := smust(t, e.shb("a", 0, nil))
	all := map[string][]int32{"0": {0, 1, 2, 3}, "1": {0, 1, 2, 3}}
	if got := activeOf(ra); !reflect.DeepEqual(got, all) || ra.MemberEpoch != 1 {
		t.Fatalf("a: epoch %d active %v", ra.MemberEpoch, got)
	}
	owned := ra.Active
	ra = smust(t, e.shb("a", 1, owned))
	if e.state("app") != StateStable {
		t.Fatalf("state %s, want Stable", e.state("app"))
	}
	// b joins: it gets nothing until a revokes half of its tasks.
	rb := smust(t, e.shb("b", 0, nil))
	if rb.MemberEpoch != 2 || len(rb.Active) != 0 {
		t.Fatalf("b: epoch %d active %v, want epoch 2 and no tasks while a owns them", rb.MemberEpoch, rb.Active)
	}
	ra = smust(t, e.shb("a", 1, owned))
	if ra.MemberEpoch != 1 {
		t.Fatalf("a advanced to epoch %d before revoking", ra.MemberEpoch)
	}
	kept := ra.Active
	if got := activeOf(ra); !reflect.DeepEqual(got, map[string][]int32{"0": {0, 1, 2, 3}}) {
		t.Fatalf("a must keep = %v", got)
	}
	// An offset commit at a's epoch still goes; one at a future epoch is fenced.
	if err := e.commitAt("app", "a", 1); err != nil {
		t.Fatalf("commit at epoch 1: %v", err)
	}
	if err := e.commitAt("app", "a", 2); !errors.Is(err, ErrFencedMemberEpoch) {
		t.Fatalf("commit at epoch 2 = %v, want FENCED_MEMBER_EPOCH", err)
	}
	ra = smust(t, e.shb("a", 1, kept))
	if ra.MemberEpoch != 2 {
		t.Fatalf("a epoch %d after revoking, want 2", ra.MemberEpoch)
	}
	rb = smust(t, e.shb("b", 2, []StreamsTaskIDs{}))
	if got := activeOf(rb); !reflect.DeepEqual(got, map[string][]int32{"1": {0, 1, 2, 3}}) {
		t.Fatalf("b active = %v", got)
	}
	rb = smust(t, e.shb("b", 2, rb.Active))
	if e.state("app") != StateStable {
		t.Fatalf("state %s, want Stable", e.state("app"))
	}
	// a leaves: b takes everything at the next epoch.
	if r := e.shb("a", -1, nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	rb = smust(t, e.shb("b", 2, rb.Active))
	if got := activeOf(rb); !reflect.DeepEqual(got, all) || rb.MemberEpoch != 3 {
		t.Fatalf("b after a left: epoch %d active %v", rb.MemberEpoch, got)
	}
	d, err := e.c.DescribeStreamsGroup("app")
	if err != nil || len(d.Members) != 1 || d.Epoch != 3 || d.State != StateStable || len(d.Subtopologies) != 2 {
		t.Fatalf("describe = %+v, %v", d, err)
	}
}

func TestStreamsGroupSessionTimeoutAndStaticReturn(t *testing.T) {
	e := sgEnv(t)
	e.topics["app-counts-repartition"] = TopicInfo{ID: [16]byte{2}, Partitions: 4}
	e.topics["app-counts-changelog"] = TopicInfo{ID: [16]byte{3}, Partitions: 4}
	// A static member keeps its process id (Kafka Streams stores it in
	// its state directory).
	static := func(r *StreamsHeartbeatRequest) {
		r.InstanceID = ptr("i1")
		if r.MemberEpoch == 0 {
			r.ProcessID = ptr("process-1")
		}
	}
	ra := smust(t, e.shb("a", 0, nil, static))
	smust(t, e.shb("a", 1, ra.Active))
	// The static member leaves for a moment and comes back under a new
	// member id: same epoch and tasks, no rebalance.
	if r := e.shb("a", -2, nil, static); r.Err != nil {
		t.Fatal(r.Err)
	}
	r := smust(t, e.shb("a2", 0, nil, static))
	if r.MemberEpoch != 1 || !reflect.DeepEqual(activeOf(r), activeOf(ra)) {
		t.Fatalf("returning static member: epoch %d active %v", r.MemberEpoch, activeOf(r))
	}
	if r := e.shb("a", 1, nil); !errors.Is(r.Err, ErrUnknownMemberID) {
		t.Fatalf("old member id = %v, want UNKNOWN_MEMBER_ID", r.Err)
	}
	// No heartbeat for the session timeout: the member is removed.
	e.clock.Advance(44 * time.Second)
	if e.state("app") == StateEmpty {
		t.Fatal("removed before its session timed out")
	}
	e.clock.Advance(2 * time.Second)
	if e.state("app") != StateEmpty {
		t.Fatalf("state %s after the session timeout, want Empty", e.state("app"))
	}
}

func TestStreamsGroupHeartbeatErrors(t *testing.T) {
	e := sgEnv(t)
	for _, tc := range []struct {
		name string
		mod  func(*StreamsHeartbeatRequest)
		want error
	}{
		{"no member id", func(r *StreamsHeartbeatRequest) { r.MemberID = "" }, ErrInvalidRequest},
		{"no topology", func(r *StreamsHeartbeatRequest) { r.Topology = nil }, ErrInvalidRequest},
		{"no process id", func(r *StreamsHeartbeatRequest) { r.ProcessID = nil }, ErrInvalidRequest},
		{"no rebalance timeout", func(r *StreamsHeartbeatRequest) { r.RebalanceTimeout = -1 }, ErrInvalidRequest},
		{"tasks on join", func(r *StreamsHeartbeatRequest) { r.Active = []StreamsTaskIDs{{"0", []int32{1}}} }, ErrInvalidRequest},
		{"duplicate subtopology", func(r *StreamsHeartbeatRequest) {
			r.Topology.Subtopologies = append(r.Topology.Subtopologies, r.Topology.Subtopologies[0])
		}, ErrStreamsInvalidTopology},
	} {
		if r := e.shb("a", 0, nil, tc.mod); !errors.Is(r.Err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, r.Err, tc.want)
		}
	}
	smust(t, e.shb("a", 0, nil))
	if r := e.shb("a", 7, nil); !errors.Is(r.Err, ErrFencedMemberEpoch) {
		t.Errorf("future epoch: %v, want FENCED_MEMBER_EPOCH", r.Err)
	}
	// A consumer group heartbeat cannot take over a streams group with
	// members, nor a classic join.
	if r := e.c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "app", MemberEpoch: 0, RebalanceTimeout: time.Second,
		SubscribedTopics: []string{"input"}, Owned: []TopicPartitions{}}); !errors.Is(r.Err, ErrGroupIDNotFound) {
		t.Errorf("consumer heartbeat into a streams group: %v", r.Err)
	}
	if l, _ := e.c.ListGroups(nil, []string{"streams"}); len(l) != 1 || l[0].Type != TypeStreams || l[0].ProtocolType != "streams" {
		t.Errorf("list streams groups = %+v", l)
	}
}

// commitAt commits one offset for the member at an epoch.
func (e *env) commitAt(group, member string, epoch int32) error {
	_, err := e.c.CommitOffsets(CommitRequest{Group: group, MemberID: member, Generation: epoch, RetentionMs: -1,
		Partitions: []CommitPartition{{TopicPartition: TopicPartition{Topic: "input", Partition: 0}, Offset: 5, LeaderEpoch: -1}}})
	return err
}

// TestStreamsGroupStandbyTasks: with group_streams_num_standby_replicas 1
// each task has a standby on the other process, never with its active.
func TestStreamsGroupStandbyTasks(t *testing.T) {
	e := newEnv(t, 1, func(c *Config) {
		c.StreamsSessionTimeout, c.StreamsHeartbeatInterval, c.StreamsNumStandbyReplicas = 45*time.Second, 5*time.Second, 1
	})
	e.topics["input"] = TopicInfo{ID: [16]byte{1}, Partitions: 4}
	e.topics["app-counts-repartition"] = TopicInfo{ID: [16]byte{2}, Partitions: 4}
	e.topics["app-counts-changelog"] = TopicInfo{ID: [16]byte{3}, Partitions: 4}
	ra := smust(t, e.shb("a", 0, nil))
	ra = smust(t, e.shb("a", 1, ra.Active))
	rb := smust(t, e.shb("b", 0, nil))
	owned := map[string][]StreamsTaskIDs{"a": nil, "b": nil}
	for i := 0; i < 6; i++ {
		for _, id := range []string{"a", "b"} {
			epoch := ra.MemberEpoch
			if id == "b" {
				epoch = rb.MemberEpoch
			}
			act := owned[id]
			if act == nil {
				act = []StreamsTaskIDs{}
			}
			r := smust(t, e.c.StreamsHeartbeat(StreamsHeartbeatRequest{Group: "app", MemberID: id, MemberEpoch: epoch,
				RebalanceTimeout: -1, Active: act, Standby: []StreamsTaskIDs{}, Warmup: []StreamsTaskIDs{}}))
			if r.Active != nil {
				owned[id] = r.Active
			}
			if id == "a" {
				ra = r
			} else {
				rb = r
			}
		}
	}
	d, err := e.c.DescribeStreamsGroup("app")
	if err != nil || d.State != StateStable {
		t.Fatalf("describe: %+v %v", d, err)
	}
	for _, m := range d.Members {
		active, standby := tasksFromIDs(m.Assignment[0]), tasksFromIDs(m.Assignment[1])
		if len(active) != 4 || len(standby) != 4 {
			t.Fatalf("%s: %d active, %d standby, want 4 and 4", m.MemberID, len(active), len(standby))
		}
		for tk := range active {
			if standby[tk] {
				t.Fatalf("%s has task %v both active and standby", m.MemberID, tk)
			}
		}
	}
}
