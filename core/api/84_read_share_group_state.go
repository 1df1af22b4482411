package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ReadShareGroupState v0 (KIP-932): a share-partition leader reads the
// share-partition's state from its share coordinator; a state never
// written answers start offset -1 and state epoch 0. Inter-broker only:
// ClusterAction on the cluster.
func init() { reg(84, 0, 0, (*Broker).handleReadShareGroupState) }

func (b *Broker) handleReadShareGroupState(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ReadShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
	allowed := b.authorizeCluster(r, sdkauth.OpClusterAction)
	// Reading a state partition led here for the first time reads its log.
	return protocol.Reply{Later: func() kmsg.Response {
		for _, t := range req.Topics {
			rt := kmsg.NewReadShareGroupStateResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
				rp.Partition, rp.StartOffset = p.Partition, -1
				rp.StateBatches = []kmsg.ReadShareGroupStateResponseTopicPartitionStateBatch{}
				if !allowed {
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
				st, ok, err := b.share().Store.Read(shareStateKey(req.GroupID, t.TopicID, p.Partition), p.LeaderEpoch)
				switch {
				case err != nil:
					rp.ErrorCode, rp.ErrorMessage = shareErrCode(err), errMessage(err)
				case ok:
					rp.StateEpoch, rp.StartOffset = st.StateEpoch, st.StartOffset
					for _, sb := range st.Batches {
						rp.StateBatches = append(rp.StateBatches, kmsg.ReadShareGroupStateResponseTopicPartitionStateBatch{
							FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset, DeliveryState: int8(sb.State), DeliveryCount: sb.DeliveryCount})
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}}
}
