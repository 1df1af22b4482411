package api_test

import (
	"fmt"
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

func TestDescribeCluster(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) { c.NodeID = 5 })
	host, portStr, _ := net.SplitHostPort(e.cfg.Listeners.Kafka)
	port, _ := strconv.Atoi(portStr)
	// CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS,
	// ALTER_CONFIGS, IDEMPOTENT_WRITE: what Kafka 4.1 reports.
	const clusterAll = 8096
	tests := []struct {
		name         string
		version      int16
		endpointType int8
		includeOps   bool
		want         *kerr.Error
		ops          int32
	}{
		{"v0", 0, 1, false, nil, -2147483648},
		{"v1 brokers", 1, 1, true, nil, clusterAll},
		{"v2 brokers", 2, 1, false, nil, -2147483648},
		{"controllers", 2, 2, false, kerr.MismatchedEndpointType, -2147483648},
		{"unknown endpoint type", 1, 7, false, kerr.UnsupportedEndpointType, -2147483648},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := kmsg.NewPtrDescribeClusterRequest()
			req.EndpointType = tt.endpointType
			req.IncludeClusterAuthorizedOperations = tt.includeOps
			resp := e.request(e.clientAt(60, tt.version), req).(*kmsg.DescribeClusterResponse)
			if resp.Version != tt.version {
				t.Fatalf("answered at v%d, want v%d", resp.Version, tt.version)
			}
			adminWantCode(t, "describe cluster", resp.ErrorCode, tt.want)
			if tt.version >= 1 && resp.EndpointType != 1 {
				t.Errorf("endpoint type %d, want 1 (a broker answered)", resp.EndpointType)
			}
			if tt.want != nil {
				if resp.ErrorMessage == nil || len(resp.Brokers) != 0 {
					t.Errorf("error answer: message %v, %d brokers; want a message and no brokers", resp.ErrorMessage, len(resp.Brokers))
				}
				return
			}
			if resp.ClusterID == "" || resp.ControllerID != 5 {
				t.Errorf("cluster %q controller %d, want an id and controller 5", resp.ClusterID, resp.ControllerID)
			}
			if len(resp.Brokers) != 1 {
				t.Fatalf("%d brokers, want 1", len(resp.Brokers))
			}
			b := resp.Brokers[0]
			if b.NodeID != 5 || b.Host != host || b.Port != int32(port) || b.Rack != nil || b.IsFenced {
				t.Errorf("broker = %+v, want node 5 at %s:%d, no rack, not fenced", b, host, port)
			}
			if resp.ClusterAuthorizedOperations != tt.ops {
				t.Errorf("authorized operations %d, want %d", resp.ClusterAuthorizedOperations, tt.ops)
			}
		})
	}
}

func TestDescribeTopicPartitions(t *testing.T) {
	e := startAdminBroker(t, func(c *config.Config) { c.Topics.AutoCreate = false })
	e.createTopic("alpha", 3, nil)
	e.createTopic("beta", 2, nil)
	e.createTopic("gamma", 1, nil)

	type page struct {
		topics string // "topic:first-last" per described topic, or "topic!code"
		next   string // "topic:partition", or "" for none
	}
	describe := func(topics []string, limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor) page {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		for _, n := range topics {
			rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
			rt.Topic = n
			req.Topics = append(req.Topics, rt)
		}
		req.ResponsePartitionLimit = limit
		req.Cursor = cursor
		resp := e.request(nil, req).(*kmsg.DescribeTopicPartitionsResponse)
		var p page
		for _, rt := range resp.Topics {
			if p.topics != "" {
				p.topics += " "
			}
			if rt.ErrorCode != 0 {
				p.topics += fmt.Sprintf("%s!%d", *rt.Topic, rt.ErrorCode)
				continue
			}
			if len(rt.Partitions) == 0 {
				p.topics += *rt.Topic + ":none"
				continue
			}
			p.topics += fmt.Sprintf("%s:%d-%d", *rt.Topic, rt.Partitions[0].Partition, rt.Partitions[len(rt.Partitions)-1].Partition)
			for _, rp := range rt.Partitions {
				if rp.LeaderID != 1 || rp.LeaderEpoch < 0 || len(rp.Replicas) != 1 || len(rp.ISR) != 1 ||
					rp.EligibleLeaderReplicas == nil || len(rp.EligibleLeaderReplicas) != 0 ||
					rp.LastKnownELR == nil || len(rp.LastKnownELR) != 0 || len(rp.OfflineReplicas) != 0 {
					t.Errorf("%s-%d described as %+v", *rt.Topic, rp.Partition, rp)
				}
			}
			if rt.TopicID == [16]byte{} || rt.IsInternal {
				t.Errorf("%s: id %x internal %v", *rt.Topic, rt.TopicID, rt.IsInternal)
			}
		}
		if resp.NextCursor != nil {
			p.next = fmt.Sprintf("%s:%d", resp.NextCursor.Topic, resp.NextCursor.Partition)
		}
		return p
	}
	cursor := func(topic string, partition int32) *kmsg.DescribeTopicPartitionsRequestCursor {
		return &kmsg.DescribeTopicPartitionsRequestCursor{Topic: topic, Partition: partition}
	}
	unknown, invalid := kerr.UnknownTopicOrPartition.Code, kerr.InvalidTopicException.Code
	badRequest := kerr.InvalidRequest.Code
	tests := []struct {
		name   string
		topics []string
		limit  int32
		cursor *kmsg.DescribeTopicPartitionsRequestCursor
		want   page
	}{
		{"all topics", nil, 2000, nil, page{"alpha:0-2 beta:0-1 gamma:0-0", ""}},
		{"named, sorted, repeats dropped", []string{"gamma", "alpha", "gamma"}, 2000, nil, page{"alpha:0-2 gamma:0-0", ""}},
		{"unknown and invalid names", []string{"beta", "nope", "bad/name"}, 2000, nil,
			page{fmt.Sprintf("bad/name!%d beta:0-1 nope!%d", invalid, unknown), ""}},
		{"first page", nil, 2, nil, page{"alpha:0-1", "alpha:2"}},
		{"second page", nil, 2, cursor("alpha", 2), page{"alpha:2-2 beta:0-0", "beta:1"}},
		{"page ends with a topic", nil, 3, nil, page{"alpha:0-2", "beta:0"}},
		{"last page", nil, 2, cursor("beta", 1), page{"beta:1-1 gamma:0-0", ""}},
		{"limit of zero still makes progress", nil, 0, nil, page{"alpha:0-0", "alpha:1"}},
		{"cursor among named topics", []string{"alpha", "gamma"}, 2000, cursor("alpha", 1), page{"alpha:1-2 gamma:0-0", ""}},
		{"cursor topic not named", []string{"alpha", "gamma"}, 2000, cursor("beta", 0),
			page{fmt.Sprintf("alpha!%d gamma!%d", badRequest, badRequest), ""}},
		{"negative cursor partition", nil, 2000, cursor("alpha", -1), page{"", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describe(tt.topics, tt.limit, tt.cursor); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
