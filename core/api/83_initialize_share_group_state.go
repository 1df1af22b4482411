package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// InitializeShareGroupState v0 (KIP-932): a broker asks the share
// coordinator to start a share-partition's state again in a new state
// epoch. Inter-broker only: ClusterAction on the cluster.
func init() { reg(83, 0, 0, (*Broker).handleInitializeShareGroupState) }

func (b *Broker) handleInitializeShareGroupState(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.InitializeShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
	allowed := b.authorizeCluster(r, sdkauth.OpClusterAction)
	// The write waits for the ISR.
	return protocol.Reply{Later: func() kmsg.Response {
		for _, t := range req.Topics {
			rt := kmsg.NewInitializeShareGroupStateResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
				rp.Partition = p.Partition
				if !allowed {
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				} else if err := b.share().Store.Initialize(shareStateKey(req.GroupID, t.TopicID, p.Partition), p.StateEpoch, p.StartOffset); err != nil {
					rp.ErrorCode, rp.ErrorMessage = shareErrCode(err), errMessage(err)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}}
}

func shareStateKey(groupID string, topicID [16]byte, partition int32) share.PartitionKey {
	return share.PartitionKey{Group: groupID, TopicPartition: share.TopicPartition{TopicID: topicID, Partition: partition}}
}
