package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeQuorum sends a DescribeQuorum for topic/partition to addr.
func describeQuorum(t *testing.T, addr, topic string, partition int32) *kmsg.DescribeQuorumResponse {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = topic
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: partition}}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("%s: DescribeQuorum: %v", addr, err)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("%s: DescribeQuorum: error %d, %d topics", addr, resp.ErrorCode, len(resp.Topics))
	}
	return resp
}

func TestDescribeQuorumSingleNode(t *testing.T) {
	b := startBroker(t)
	resp := describeQuorum(t, b.Addr, "__cluster_metadata", 0)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("partition error %d", p.ErrorCode)
	}
	if p.LeaderID != b.Config.NodeID || p.LeaderEpoch < 1 || p.HighWatermark < 1 {
		t.Fatalf("leader %d epoch %d high watermark %d; want leader %d, epoch and high watermark >= 1", p.LeaderID, p.LeaderEpoch, p.HighWatermark, b.Config.NodeID)
	}
	if len(p.CurrentVoters) != 1 || len(p.Observers) != 0 {
		t.Fatalf("voters %+v observers %+v; want one voter, no observer", p.CurrentVoters, p.Observers)
	}
	v := p.CurrentVoters[0]
	if v.ReplicaID != b.Config.NodeID || v.LogEndOffset < p.HighWatermark || v.LastFetchTimestamp <= 0 || v.LastCaughtUpTimestamp <= 0 {
		t.Fatalf("voter %+v; want node %d with its log end at or past the high watermark %d and timestamps set", v, b.Config.NodeID, p.HighWatermark)
	}

	// Any other topic or partition is not the metadata log.
	for _, c := range []struct {
		topic     string
		partition int32
	}{{"__cluster_metadata", 1}, {"orders", 0}} {
		got := describeQuorum(t, b.Addr, c.topic, c.partition).Topics[0].Partitions[0]
		if got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Errorf("%s-%d: error %d, want UNKNOWN_TOPIC_OR_PARTITION", c.topic, c.partition, got.ErrorCode)
		}
	}
}

func TestDescribeQuorumThreeNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	nodes := startCluster(t, 3)
	deadline := time.Now().Add(20 * time.Second)
	for _, nd := range nodes {
		for {
			resp := describeQuorum(t, nd.addr, "__cluster_metadata", 0)
			p := resp.Topics[0].Partitions[0]
			ok := p.ErrorCode == 0 && p.LeaderID >= 1 && p.LeaderEpoch >= 1 && len(p.CurrentVoters) == 3 && len(resp.Nodes) == 3
			for i, v := range p.CurrentVoters {
				// Every voter heartbeats its raft log end; once it has
				// reached the high watermark it has a caught-up time.
				ok = ok && v.ReplicaID == int32(i+1) && v.LogEndOffset >= 1 && v.LastFetchTimestamp > 0 && v.LastCaughtUpTimestamp > 0
			}
			for _, n := range resp.Nodes {
				ok = ok && len(n.Listeners) == 1 && n.Listeners[0].Name == "CONTROLLER" && n.Listeners[0].Port > 0
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d: DescribeQuorum: %+v nodes %+v", nd.id, p, resp.Nodes)
			}
			time.Sleep(50 * time.Millisecond) // polling a remote condition, not synchronising
		}
	}
}
