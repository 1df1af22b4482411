package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

func init() { reg(55, 0, 2, (*Broker).handleDescribeQuorum) }

// handleDescribeQuorum answers for the metadata log (__cluster_metadata,
// partition 0) from the active controller's raft state; it needs DESCRIBE
// on the cluster. A Kafka broker forwards the request to its controller;
// Gregor's brokers ask the active controller over the controller RPCs.
// Any other topic or partition answers UNKNOWN_TOPIC_OR_PARTITION, as
// Kafka's raft client does.
func (b *Broker) handleDescribeQuorum(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeQuorumRequest)
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if !b.authorizeCluster(r, sdkauth.OpDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		if r.Version >= 2 {
			resp.ErrorMessage = strPtr(kerr.ClusterAuthorizationFailed.Message)
		}
		return protocol.Reply{Resp: resp}
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != controller.MetadataTopic ||
		len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != controller.MetadataPartition {
		return protocol.Reply{Resp: quorumPartitionError(req, resp, kerr.UnknownTopicOrPartition)}
	}
	ctx, cancel := b.ctx(0)
	defer cancel()
	qs, err := b.Controller.DescribeQuorum(ctx)
	if err != nil {
		b.Logger.Warn("describe quorum", "err", err)
		return protocol.Reply{Resp: quorumPartitionError(req, resp, kerr.NotLeaderForPartition)}
	}
	controller.QuorumResponse(resp, qs)
	return protocol.Reply{Resp: resp}
}

// quorumPartitionError answers every requested partition with code.
func quorumPartitionError(req *kmsg.DescribeQuorumRequest, resp *kmsg.DescribeQuorumResponse, code *kerr.Error) *kmsg.DescribeQuorumResponse {
	for _, rt := range req.Topics {
		t := kmsg.NewDescribeQuorumResponseTopic()
		t.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			p := kmsg.NewDescribeQuorumResponseTopicPartition()
			p.Partition, p.ErrorCode = rp.Partition, code.Code
			p.LeaderID, p.LeaderEpoch, p.HighWatermark = -1, -1, -1
			if req.Version >= 2 {
				p.ErrorMessage = strPtr(code.Message)
			}
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}
