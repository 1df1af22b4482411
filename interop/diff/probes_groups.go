package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// probeGroupsAndELR compares the other Kafka 4.4 APIs of issue 19: group
// configs (config resource type 32) in DescribeConfigs and
// IncrementalAlterConfigs, the eligible leader replicas of
// DescribeTopicPartitions, and a streams group (StreamsGroupHeartbeat,
// StreamsGroupDescribe).
func probeGroupsAndELR(p *pair, prefix string) {
	group := prefix + "-g"
	p.each(44, 1, func(b *broker, v int16) {
		for _, c := range []struct{ label, name, value string }{
			{"set consumer.session.timeout.ms", "consumer.session.timeout.ms", "50000"},
			{"below the broker's minimum", "consumer.session.timeout.ms", "1000"},
			{"unknown config", "consumer.no.such.config", "1"},
		} {
			req := kmsg.NewPtrIncrementalAlterConfigsRequest()
			r := kmsg.NewIncrementalAlterConfigsRequestResource()
			r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
			rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			rc.Name, rc.Value = c.name, kmsg.StringPtr(c.value)
			r.Configs = append(r.Configs, rc)
			req.Resources = append(req.Resources, r)
			resp, err := b.send(req, v)
			if err != nil {
				b.fact("IncrementalAlterConfigs/group/"+c.label+"/transport", err)
				continue
			}
			for _, res := range resp.(*kmsg.IncrementalAlterConfigsResponse).Resources {
				b.fact("IncrementalAlterConfigs/group/"+c.label+"/error", errName(res.ErrorCode))
			}
		}
	})
	p.each(32, 4, func(b *broker, v int16) {
		req := kmsg.NewPtrDescribeConfigsRequest()
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
		req.Resources = append(req.Resources, r)
		resp, err := b.send(req, v)
		if err != nil {
			b.fact("DescribeConfigs/group/transport", err)
			return
		}
		for _, res := range resp.(*kmsg.DescribeConfigsResponse).Resources {
			b.fact("DescribeConfigs/group/error", errName(res.ErrorCode))
			b.fact("DescribeConfigs/group/count", len(res.Configs))
			for _, c := range res.Configs {
				b.fact("DescribeConfigs/group/"+c.Name, configFact(c.Value, c.ReadOnly, int8(c.Source), c.IsSensitive))
			}
		}
	})
	p.each(75, 0, func(b *broker, v int16) {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		req.ResponsePartitionLimit = 2000
		for _, name := range []string{prefix + "-ct", prefix + "-nope"} {
			t := kmsg.NewDescribeTopicPartitionsRequestTopic()
			t.Topic = name
			req.Topics = append(req.Topics, t)
		}
		resp, err := b.send(req, v)
		if err != nil {
			b.fact("DescribeTopicPartitions/transport", err)
			return
		}
		for _, t := range resp.(*kmsg.DescribeTopicPartitionsResponse).Topics {
			key := "DescribeTopicPartitions/topic " + strings.TrimPrefix(deref(t.Topic), prefix)
			b.fact(key+"/error", errName(t.ErrorCode))
			b.fact(key+"/partitions", len(t.Partitions))
			for _, pp := range t.Partitions {
				if pp.Partition != 0 {
					continue
				}
				b.fact(key+"/p0/error", errName(pp.ErrorCode))
				b.fact(key+"/p0/leader", present(pp.LeaderID >= 0))
				b.fact(key+"/p0/isr", len(pp.ISR))
				b.fact(key+"/p0/eligible_leader_replicas", fmt.Sprint(pp.EligibleLeaderReplicas))
				b.fact(key+"/p0/last_known_elr", fmt.Sprint(pp.LastKnownELR))
				b.fact(key+"/p0/offline_replicas", fmt.Sprint(pp.OfflineReplicas))
			}
		}
	})
	probeStreamsGroup(p, prefix)
}

// probeStreamsGroup joins a streams group with a one-subtopology topology
// reading prefix-ct, describes it, leaves it, and describes an unknown group.
func probeStreamsGroup(p *pair, prefix string) {
	group := prefix + "-sg"
	p.each(88, 1, func(b *broker, v int16) {
		req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		req.Group, req.MemberID, req.RebalanceTimeoutMillis = group, "diff-member-"+b.name, 30000
		req.ProcessID = kmsg.StringPtr("diff-process")
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		sub.SubtopologyID, sub.SourceTopics = "0", []string{prefix + "-ct"}
		topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{sub}
		req.Topology = &topo
		r, err := streamsJoin(b, req, v)
		if err != nil {
			b.fact("StreamsGroupHeartbeat/join/transport", err)
			return
		}
		if r.ErrorMessage != nil {
			fmt.Fprintf(os.Stderr, "diff: %s: StreamsGroupHeartbeat join: %s\n", b.name, *r.ErrorMessage)
		}
		b.fact("StreamsGroupHeartbeat/join/error", errName(r.ErrorCode))
		b.fact("StreamsGroupHeartbeat/join/member_epoch", r.MemberEpoch)
		b.fact("StreamsGroupHeartbeat/join/heartbeat_interval_ms", r.HeartbeatIntervalMillis)
		b.fact("StreamsGroupHeartbeat/join/acceptable_recovery_lag (v0 int32)", r.AcceptableRecoveryLagLegacy)
		b.fact("StreamsGroupHeartbeat/join/acceptable_recovery_lag (v1 int64)", r.AcceptableRecoveryLag)
		b.fact("StreamsGroupHeartbeat/join/topology_description_required", r.TopologyDescriptionRequired)
		b.fact("StreamsGroupHeartbeat/join/task_offset_interval_ms", r.TaskOffsetIntervalMillis)
		var status []string
		for _, s := range r.Status {
			status = append(status, fmt.Sprint(s.StatusCode))
		}
		sort.Strings(status)
		b.fact("StreamsGroupHeartbeat/join/status", strings.Join(status, ","))

		describeStreamsGroup(b, "StreamsGroupDescribe/joined", group)

		// Heartbeats for as long as Kafka's streams.initial.rebalance.delay.ms
		// (3 s by default) and a little more: the member then has its tasks.
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Group, hb.MemberID, hb.MemberEpoch = group, req.MemberID, r.MemberEpoch
		var later *kmsg.StreamsGroupHeartbeatResponse
		for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
			lr, err := b.send(hb, v)
			if err != nil {
				b.fact("StreamsGroupHeartbeat/after 4 s/transport", err)
				return
			}
			later = lr.(*kmsg.StreamsGroupHeartbeatResponse)
			if later.ErrorCode != 0 {
				break
			}
			hb.MemberEpoch = later.MemberEpoch
			if later.ActiveTasks != nil {
				hb.ActiveTasks = later.ActiveTasks
			}
			if hb.ActiveTasks == nil {
				hb.ActiveTasks = []kmsg.TaskIDs{}
			}
			hb.StandbyTasks, hb.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		}
		b.fact("StreamsGroupHeartbeat/after 4 s/error", errName(later.ErrorCode))
		var laterStatus []string
		for _, s := range later.Status {
			laterStatus = append(laterStatus, fmt.Sprint(s.StatusCode))
		}
		b.fact("StreamsGroupHeartbeat/after 4 s/status", strings.Join(laterStatus, ","))
		b.fact("StreamsGroupHeartbeat/after 4 s/active tasks", fmt.Sprint(hb.ActiveTasks))
		b.fact("StreamsGroupHeartbeat/after 4 s/topology_description_required", later.TopologyDescriptionRequired)
		describeStreamsGroup(b, "StreamsGroupDescribe/after 4 s", group)

		leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		leave.Group, leave.MemberID, leave.MemberEpoch = group, req.MemberID, -1
		if lr, err := b.send(leave, v); err == nil {
			b.fact("StreamsGroupHeartbeat/leave/error", errName(lr.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode))
			b.fact("StreamsGroupHeartbeat/leave/member_epoch", lr.(*kmsg.StreamsGroupHeartbeatResponse).MemberEpoch)
		} else {
			b.fact("StreamsGroupHeartbeat/leave/transport", err)
		}
	})
	p.each(89, 1, func(b *broker, v int16) {
		describeStreamsGroup(b, "StreamsGroupDescribe/unknown", prefix+"-nope")
	})
}

// streamsJoin sends the join once the broker is the group's coordinator:
// FindCoordinator first (it creates __consumer_offsets), then the heartbeat
// again while the coordinator is loading or not yet elected, for up to 30 s.
func streamsJoin(b *broker, req *kmsg.StreamsGroupHeartbeatRequest, v int16) (*kmsg.StreamsGroupHeartbeatResponse, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey, fc.CoordinatorKeys = req.Group, []string{req.Group}
		if _, err := b.send(fc, min(b.versions[10][1], 4)); err != nil {
			return nil, err
		}
		resp, err := b.send(req, v)
		if err != nil {
			return nil, err
		}
		r := resp.(*kmsg.StreamsGroupHeartbeatResponse)
		switch r.ErrorCode {
		case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code:
			if time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				continue
			}
		}
		return r, nil
	}
}

func describeStreamsGroup(b *broker, key, group string) {
	v := min(b.versions[89][1], 1)
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := b.send(req, v)
	if err != nil {
		b.fact(key+"/transport", err)
		return
	}
	for _, g := range resp.(*kmsg.StreamsGroupDescribeResponse).Groups {
		b.fact(key+"/error", errName(g.ErrorCode))
		b.fact(key+"/state", g.State)
		b.fact(key+"/members", len(g.Members))
		b.fact(key+"/topology", present(g.Topology != nil))
		if g.Topology != nil {
			b.fact(key+"/topology/subtopologies", len(g.Topology.Subtopologies))
		}
		for _, m := range g.Members {
			b.fact(key+"/member/process_id", m.ProcessID)
			b.fact(key+"/member/member_epoch", m.MemberEpoch)
			b.fact(key+"/member/topology_epoch", m.TopologyEpoch)
			b.fact(key+"/member/client_host", present(m.ClientHost != ""))
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// groupExplanations say why the group config and streams group facts
// differ; init adds them to explanations.
var groupExplanations = map[string]string{
	"StreamsGroupHeartbeat/join/status":                             streamsDelayNote,
	"StreamsGroupDescribe/joined/state":                             streamsDelayNote,
	"StreamsGroupDescribe/after 4 s/member/member_epoch":            streamsDelayNote,
	"StreamsGroupHeartbeat/join/topology_description_required":      topologyDescriptionNote,
	"StreamsGroupHeartbeat/after 4 s/topology_description_required": topologyDescriptionNote,
	"DescribeConfigs/group/count": "Gregor lists the 14 group configs it honours; Kafka 4.4 has 7 more, " +
		"each listed below.",
}

const streamsDelayNote = "Kafka 4.4 delays the first assignment of a new streams group by " +
	"streams.initial.rebalance.delay.ms (3000 ms by default; scripts/kafka-ref.sh sets only the classic " +
	"group.initial.rebalance.delay.ms to 0) and answers status 5 ASSIGNMENT_DELAYED with the group Assigning; " +
	"the delayed assignment is a new group epoch, so the member has epoch 2 once it has its tasks. Gregor does " +
	"not implement that delay yet: it assigns on the first heartbeat (Stable, epoch 1), although it lists " +
	"streams.initial.rebalance.delay.ms among the group configs. After 4 s both have given the member the same tasks."

const topologyDescriptionNote = "Kafka 4.4 asks a member for its topology description only when " +
	"group.streams.topology.description.plugin.class names a plugin to hand it to (the reference broker has " +
	"none); Gregor keeps descriptions itself, for StreamsGroupDescribe v1, and asks while the group has none."

// groupConfigsNotInGregor are Kafka 4.4 group configs Gregor does not
// implement, with what each would take.
var groupConfigsNotInGregor = map[string]string{
	"consumer.assignment.interval.ms":           "the interval that batches target-assignment computations of a consumer group",
	"share.assignment.interval.ms":              "the same for a share group",
	"streams.assignment.interval.ms":            "the same for a streams group",
	"errors.deadletterqueue.topic.name":         "the dead-letter queue topic of the group",
	"errors.deadletterqueue.copy.record.enable": "whether the dead-letter queue gets a copy of the record",
	"streams.assignor.name":                     "the choice of server-side streams assignor (Gregor has one, sticky, as Kafka's default)",
	"streams.rack.aware.assignment.tags":        "the client tags the streams assignor spreads standby tasks over",
}

func init() {
	for k, v := range groupExplanations {
		explanations[k] = v
	}
	for name, what := range groupConfigsNotInGregor {
		explanations["DescribeConfigs/group/"+name] = "a Kafka 4.4 group config Gregor does not implement yet (" + what +
			"); Gregor leaves it out rather than list a setting it would not honour."
	}
}
