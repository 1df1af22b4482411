package main

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// probeQuorumAndTelemetry compares the Kafka 4.4 APIs answered from the
// metadata quorum and the client-metrics subscriptions: DescribeQuorum,
// ListConfigResources, GetTelemetrySubscriptions and PushTelemetry, and
// ApiVersions v5 naming another cluster.
func probeQuorumAndTelemetry(p *pair) {
	p.each(55, 2, func(b *broker, v int16) {
		req := kmsg.NewPtrDescribeQuorumRequest()
		t := kmsg.NewDescribeQuorumRequestTopic()
		t.Topic = "__cluster_metadata"
		t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}
		req.Topics = append(req.Topics, t)
		r, err := b.send(req, v)
		if err != nil {
			b.fact("DescribeQuorum/transport", err)
			return
		}
		resp := r.(*kmsg.DescribeQuorumResponse)
		b.fact("DescribeQuorum/error", errName(resp.ErrorCode))
		for _, t := range resp.Topics {
			for _, pp := range t.Partitions {
				b.fact("DescribeQuorum/partition error", errName(pp.ErrorCode))
				b.fact("DescribeQuorum/leader", present(pp.LeaderID >= 0))
				b.fact("DescribeQuorum/leader_epoch", present(pp.LeaderEpoch >= 1))
				b.fact("DescribeQuorum/high_watermark", present(pp.HighWatermark > 0))
				b.fact("DescribeQuorum/voters", len(pp.CurrentVoters))
				b.fact("DescribeQuorum/observers", len(pp.Observers))
				for _, vs := range pp.CurrentVoters {
					b.fact("DescribeQuorum/voter log_end_offset", present(vs.LogEndOffset > 0))
					b.fact("DescribeQuorum/voter last_fetch_timestamp", present(vs.LastFetchTimestamp > 0))
					b.fact("DescribeQuorum/voter last_caught_up_timestamp", present(vs.LastCaughtUpTimestamp > 0))
				}
			}
		}
		b.fact("DescribeQuorum/nodes", len(resp.Nodes))
	})
	p.each(74, 1, func(b *broker, v int16) {
		req := kmsg.NewPtrListConfigResourcesRequest()
		req.ResourceTypes = []int8{16}
		r, err := b.send(req, v)
		if err != nil {
			b.fact("ListConfigResources/transport", err)
			return
		}
		resp := r.(*kmsg.ListConfigResourcesResponse)
		b.fact("ListConfigResources/client-metrics/error", errName(resp.ErrorCode))
		b.fact("ListConfigResources/client-metrics/resources", len(resp.ConfigResources))
	})
	p.each(71, 0, func(b *broker, v int16) {
		r, err := b.send(kmsg.NewPtrGetTelemetrySubscriptionsRequest(), v)
		if err != nil {
			b.fact("GetTelemetrySubscriptions/transport", err)
			return
		}
		resp := r.(*kmsg.GetTelemetrySubscriptionsResponse)
		b.fact("GetTelemetrySubscriptions/error", errName(resp.ErrorCode))
		b.fact("GetTelemetrySubscriptions/client_instance_id", present(resp.ClientInstanceID != [16]byte{}))
		b.fact("GetTelemetrySubscriptions/accepted_compression_types", resp.AcceptedCompressionTypes)
		b.fact("GetTelemetrySubscriptions/push_interval_ms", resp.PushIntervalMillis)
		b.fact("GetTelemetrySubscriptions/telemetry_max_bytes", resp.TelemetryMaxBytes)
		b.fact("GetTelemetrySubscriptions/delta_temporality", resp.DeltaTemporality)
		b.fact("GetTelemetrySubscriptions/requested_metrics", strings.Join(resp.RequestedMetrics, ","))

		push := kmsg.NewPtrPushTelemetryRequest()
		push.ClientInstanceID, push.SubscriptionID = resp.ClientInstanceID, resp.SubscriptionID+1
		if pr, err := b.send(push, v); err == nil {
			b.fact("PushTelemetry/stale subscription/error", errName(pr.(*kmsg.PushTelemetryResponse).ErrorCode))
		} else {
			b.fact("PushTelemetry/transport", err)
		}
	})
	p.each(18, 5, func(b *broker, v int16) {
		if v < 5 {
			return
		}
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "gregor-diff", "1.0"
		req.ClusterID, req.NodeID = kmsg.StringPtr("AAAAAAAAAAAAAAAAAAAAAA"), 1
		r, err := b.send(req, v)
		if err != nil {
			b.fact("ApiVersions v5/another cluster/transport", err)
			return
		}
		b.fact("ApiVersions v5/another cluster/error", errName(r.(*kmsg.ApiVersionsResponse).ErrorCode))
	})
}

// explanations say why a known difference is expected; DIFF.md lists them
// under the table for the facts that differ.
var explanations = withGregorTopicConfigs(map[string]string{
	"ApiVersions/advertised only by Gregor": "GetTelemetrySubscriptions and PushTelemetry: Apache Kafka advertises them only when a " +
		"metrics reporter implementing ClientTelemetry is configured (the reference broker has none); Gregor's receiver is " +
		"built in and exports pushed client metrics on /metrics.",
	"DescribeQuorum/nodes": "a single-node Gregor has no controller listener (raft runs in-process), so its one voter has no " +
		"CONTROLLER endpoint to list; a multi-node Gregor lists every voter's controller listener.",
})

// gregorTopicConfigs are Gregor's own topic configs: the extension points a
// topic picks (partitioner, its placement check, retention policy, produce
// and fetch interceptors) and the mirror link that owns a mirrored topic.
var gregorTopicConfigs = []string{"gregor.interceptor.fetch", "gregor.interceptor.produce", "gregor.mirror.link", "gregor.partitioner",
	"gregor.partitioner.enforce", "gregor.retention.policy"}

// withGregorTopicConfigs adds to m why Gregor lists its own topic configs
// where Apache Kafka has none.
func withGregorTopicConfigs(m map[string]string) map[string]string {
	for _, name := range gregorTopicConfigs {
		why := name + " is one of Gregor's own topic configs (extension points and mirror links), with its default; " +
			"Apache Kafka has no such config."
		m["CreateTopics/ok/config/"+name] = why
		m["DescribeConfigs/topic -ct/"+name] = why
	}
	return m
}
