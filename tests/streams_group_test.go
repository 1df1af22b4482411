package tests

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// streamsMember drives one member of a streams group (KIP-1071) as Kafka
// Streams does: it reports the tasks it owns and takes what it is given.
type streamsMember struct {
	id, process string
	epoch       int32
	active      []kmsg.TaskIDs
	status      []kmsg.StreamsGroupHeartbeatResponseStatus
}

func wordCountTopology() *kmsg.StreamsGroupHeartbeatRequestTopology {
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	src := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	src.SubtopologyID, src.SourceTopics, src.RepartitionSinkTopics = "0", []string{"wc-input"}, []string{"wc-app-counts-repartition"}
	agg := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	agg.SubtopologyID = "1"
	rep := kmsg.NewTopicInfo()
	rep.Topic = "wc-app-counts-repartition"
	rep.Configs = []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "delete"}, {Key: "retention.ms", Value: "-1"}}
	cl := kmsg.NewTopicInfo()
	cl.Topic = "wc-app-counts-changelog"
	cl.Configs = []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}
	agg.RepartitionSourceTopics, agg.StateChangelogTopics = []kmsg.TopicInfo{rep}, []kmsg.TopicInfo{cl}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{src, agg}
	return &topo
}

func (m *streamsMember) heartbeat(t *testing.T, cl *kgo.Client, group string) *kmsg.StreamsGroupHeartbeatResponse {
	t.Helper()
	resp, err := m.tryHeartbeat(t, cl, group)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// tryHeartbeat is heartbeat, returning the error instead of failing.
func (m *streamsMember) tryHeartbeat(t *testing.T, cl *kgo.Client, group string) (*kmsg.StreamsGroupHeartbeatResponse, error) {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = group, m.id, m.epoch
	if m.epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		req.Topology, req.ProcessID = wordCountTopology(), &m.process
	} else if m.epoch > 0 {
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = m.active, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		if req.ActiveTasks == nil {
			req.ActiveTasks = []kmsg.TaskIDs{}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var resp *kmsg.StreamsGroupHeartbeatResponse
	for {
		co, err := findCoordinator(cl, group)
		if err != nil {
			return nil, err
		}
		kr, err := co.Request(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("StreamsGroupHeartbeat of %s: %w", m.id, err)
		}
		resp = kr.(*kmsg.StreamsGroupHeartbeatResponse)
		err = kerr.ErrorForCode(resp.ErrorCode)
		// A coordinator that is still loading, or has just moved, is
		// retried as clients retry it, until the deadline.
		retriable := err == kerr.CoordinatorLoadInProgress || err == kerr.CoordinatorNotAvailable || err == kerr.NotCoordinator
		if retriable && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return resp, fmt.Errorf("StreamsGroupHeartbeat of %s at epoch %d: %w (%v)", m.id, m.epoch, err, resp.ErrorMessage)
		}
		break
	}
	if m.epoch >= 0 {
		m.epoch = resp.MemberEpoch
	}
	if resp.ActiveTasks != nil {
		m.active = resp.ActiveTasks
	}
	m.status = resp.Status
	return resp, nil
}

// tasks is the member's active tasks as "subtopology:partition".
func (m *streamsMember) tasks() []string {
	var out []string
	for _, t := range m.active {
		for _, p := range t.Partitions {
			out = append(out, fmt.Sprintf("%s:%d", t.SubtopologyID, p))
		}
	}
	sort.Strings(out)
	return out
}

func TestStreamsGroupProtocol(t *testing.T) {
	b := startBroker(t, groupConfig)
	const group = "wc-app"
	// kgo's default versions leave the streams requests out.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.MaxVersions(kversion.V4_4_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	a := &streamsMember{id: "member-a", process: "process-a"}
	bm := &streamsMember{id: "member-b", process: "process-b"}

	// No input topic yet: the member joins and is told so.
	a.heartbeat(t, cl, group)
	if len(a.status) != 1 || a.status[0].StatusCode != 1 || len(a.tasks()) != 0 {
		t.Fatalf("without the input topic: status %+v, tasks %v; want MISSING_SOURCE_TOPICS and none", a.status, a.tasks())
	}
	createTopic(t, b.Addr, "wc-input", 4, nil)
	// The broker creates the repartition and changelog topics; until they
	// exist the member sees MISSING_INTERNAL_TOPICS.
	sawMissingInternal := false
	eventually(t, 30*time.Second, "member a owns all 8 tasks", func() error {
		a.heartbeat(t, cl, group)
		for _, s := range a.status {
			sawMissingInternal = sawMissingInternal || s.StatusCode == 3
		}
		if len(a.status) != 0 || len(a.tasks()) != 8 {
			return fmt.Errorf("status %+v, tasks %v", a.status, a.tasks())
		}
		return nil
	})
	if !sawMissingInternal {
		t.Error("no MISSING_INTERNAL_TOPICS status while the internal topics were created")
	}
	adm := newAdmin(t, b.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	details, err := adm.ListTopics(ctx, "wc-app-counts-repartition", "wc-app-counts-changelog")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"wc-app-counts-repartition", "wc-app-counts-changelog"} {
		if d, ok := details[name]; !ok || d.Err != nil || len(d.Partitions) != 4 {
			t.Fatalf("internal topic %s: %+v", name, d)
		}
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx, "wc-app-counts-changelog")
	if err != nil {
		t.Fatal(err)
	}
	v, err := cfgs.On("wc-app-counts-changelog", nil)
	if err != nil {
		t.Fatal(err)
	}
	policy := ""
	for _, c := range v.Configs {
		if c.Key == "cleanup.policy" {
			policy = c.MaybeValue()
		}
	}
	if policy != "compact" {
		t.Fatalf("changelog cleanup.policy = %q, want compact", policy)
	}

	// b joins: a gives up half of its tasks before b gets them.
	bm.heartbeat(t, cl, group)
	eventually(t, 30*time.Second, "a and b split the tasks", func() error {
		a.heartbeat(t, cl, group)
		bm.heartbeat(t, cl, group)
		if len(a.tasks()) != 4 || len(bm.tasks()) != 4 {
			return fmt.Errorf("a %v, b %v", a.tasks(), bm.tasks())
		}
		return nil
	})
	for _, ta := range a.tasks() {
		for _, tb := range bm.tasks() {
			if ta == tb {
				t.Fatalf("task %s is active on both members", ta)
			}
		}
	}
	if a.epoch != bm.epoch {
		t.Fatalf("epochs a %d b %d after the split", a.epoch, bm.epoch)
	}
	d := describeStreamsGroup(t, cl, group)
	if d.State != "Stable" || len(d.Members) != 2 || d.Topology == nil || len(d.Topology.Subtopologies) != 2 {
		t.Fatalf("StreamsGroupDescribe: state %s, %d members, topology %+v", d.State, len(d.Members), d.Topology)
	}
	// Offset commits are checked against the member epoch.
	if code := streamsCommit(t, cl, group, a.id, a.epoch); code != 0 {
		t.Fatalf("commit at the member's epoch: %v", kerr.ErrorForCode(code))
	}
	if code := streamsCommit(t, cl, group, a.id, a.epoch+1); code != kerr.StaleMemberEpoch.Code && code != kerr.FencedMemberEpoch.Code {
		t.Fatalf("commit at a future epoch: %v, want a member epoch error", kerr.ErrorForCode(code))
	}
	listed, err := adm.ListGroupsByType(ctx, []string{"streams"})
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := listed[group]; !ok || l.GroupType != "streams" || l.State != "Stable" {
		t.Fatalf("ListGroups(type streams) = %+v", listed)
	}
	if _, err := adm.DeleteGroup(ctx, group); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("deleting a streams group with members: %v, want NON_EMPTY_GROUP", err)
	}

	// b leaves: its tasks move to a.
	before := a.tasks()
	leave := &streamsMember{id: bm.id, epoch: -1}
	leave.heartbeat(t, cl, group)
	eventually(t, 20*time.Second, "a owns all 8 tasks after b left", func() error {
		a.heartbeat(t, cl, group)
		if len(a.tasks()) != 8 {
			return fmt.Errorf("a %v", a.tasks())
		}
		return nil
	})
	for _, tk := range before {
		found := false
		for _, now := range a.tasks() {
			found = found || now == tk
		}
		if !found {
			t.Fatalf("a lost task %s it owned before b left", tk)
		}
	}
	(&streamsMember{id: a.id, epoch: -1}).heartbeat(t, cl, group)
	if _, err := adm.DeleteGroup(ctx, group); err != nil {
		t.Fatalf("deleting the empty streams group: %v", err)
	}
}

// groupCoordinator is the group's coordinator, found with FindCoordinator:
// kgo does not route the streams group requests itself.
func groupCoordinator(t *testing.T, cl *kgo.Client, group string) *kgo.Broker {
	t.Helper()
	b, err := findCoordinator(cl, group)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func findCoordinator(cl *kgo.Client, group string) (*kgo.Broker, error) {
	id, err := coordinatorID(cl, group)
	if err != nil {
		return nil, err
	}
	return cl.Broker(int(id)), nil
}

// coordinatorID is the node id FindCoordinator answers for the group.
func coordinatorID(cl *kgo.Client, group string) (int32, error) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKeys = []string{group}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 {
		return -1, fmt.Errorf("FindCoordinator(%s): %v %+v", group, err, resp)
	}
	return resp.Coordinators[0].NodeID, nil
}

func describeStreamsGroup(t *testing.T, cl *kgo.Client, group string) kmsg.StreamsGroupDescribeResponseGroup {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kr, err := groupCoordinator(t, cl, group).Request(ctx, req)
	if err != nil {
		t.Fatalf("StreamsGroupDescribe: %v", err)
	}
	resp := kr.(*kmsg.StreamsGroupDescribeResponse)
	if len(resp.Groups) != 1 {
		t.Fatalf("StreamsGroupDescribe: %+v", resp)
	}
	if err := kerr.ErrorForCode(resp.Groups[0].ErrorCode); err != nil {
		t.Fatalf("StreamsGroupDescribe: %v", err)
	}
	return resp.Groups[0]
}

func streamsCommit(t *testing.T, cl *kgo.Client, group, member string, epoch int32) int16 {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.MemberID, req.Generation = group, member, epoch
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "wc-input"
	// OffsetCommit v10 names topics by id.
	ctx0, cancel0 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel0()
	if md, err := kadm.NewClient(cl).Metadata(ctx0, rt.Topic); err == nil {
		rt.TopicID = md.Topics[rt.Topic].ID
	}
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("OffsetCommit: %v", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("OffsetCommit answer: %+v", resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}
