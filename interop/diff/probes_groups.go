package main

import (
	"fmt"
	"sort"
	"strings"

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
	p.each(88, 0, func(b *broker, v int16) {
		req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		req.Group, req.MemberID, req.RebalanceTimeoutMillis = group, "diff-member-"+b.name, 30000
		req.ProcessID = kmsg.StringPtr("diff-process")
		topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
		sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
		sub.SubtopologyID, sub.SourceTopics = "0", []string{prefix + "-ct"}
		topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{sub}
		req.Topology = &topo
		resp, err := b.send(req, v)
		if err != nil {
			b.fact("StreamsGroupHeartbeat/join/transport", err)
			return
		}
		r := resp.(*kmsg.StreamsGroupHeartbeatResponse)
		b.fact("StreamsGroupHeartbeat/join/error", errName(r.ErrorCode))
		b.fact("StreamsGroupHeartbeat/join/member_epoch", r.MemberEpoch)
		b.fact("StreamsGroupHeartbeat/join/heartbeat_interval_ms", r.HeartbeatIntervalMillis)
		b.fact("StreamsGroupHeartbeat/join/acceptable_recovery_lag", r.AcceptableRecoveryLagLegacy)
		b.fact("StreamsGroupHeartbeat/join/task_offset_interval_ms", r.TaskOffsetIntervalMillis)
		var status []string
		for _, s := range r.Status {
			status = append(status, fmt.Sprint(s.StatusCode))
		}
		sort.Strings(status)
		b.fact("StreamsGroupHeartbeat/join/status", strings.Join(status, ","))

		describeStreamsGroup(b, "StreamsGroupDescribe/joined", group)

		leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		leave.Group, leave.MemberID, leave.MemberEpoch = group, req.MemberID, -1
		if lr, err := b.send(leave, v); err == nil {
			b.fact("StreamsGroupHeartbeat/leave/error", errName(lr.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode))
			b.fact("StreamsGroupHeartbeat/leave/member_epoch", lr.(*kmsg.StreamsGroupHeartbeatResponse).MemberEpoch)
		} else {
			b.fact("StreamsGroupHeartbeat/leave/transport", err)
		}
	})
	p.each(89, 0, func(b *broker, v int16) {
		describeStreamsGroup(b, "StreamsGroupDescribe/unknown", prefix+"-nope")
	})
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
