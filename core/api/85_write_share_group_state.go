package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// WriteShareGroupState v0-1 (KIP-932; v1 adds DeliveryCompleteCount,
// KIP-1226, which the coordinator counts from the batches itself): a
// share-partition leader writes state batches, merged into the stored
// state and answered once replicated. Inter-broker only: ClusterAction on
// the cluster.
func init() { reg(85, 0, 1, (*Broker).handleWriteShareGroupState) }

func (b *Broker) handleWriteShareGroupState(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.WriteShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
	allowed := b.authorizeCluster(r, sdkauth.OpClusterAction)
	// The write waits for the ISR.
	return protocol.Reply{Later: func() kmsg.Response {
		for _, t := range req.Topics {
			rt := kmsg.NewWriteShareGroupStateResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
				rp.Partition = p.Partition
				if !allowed {
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
				batches := make([]share.StateBatch, 0, len(p.StateBatches))
				for _, sb := range p.StateBatches {
					batches = append(batches, share.StateBatch{FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset,
						State: share.RecordState(sb.DeliveryState), DeliveryCount: sb.DeliveryCount})
				}
				k := shareStateKey(req.GroupID, t.TopicID, p.Partition)
				if err := b.share().Store.Write(k, p.StateEpoch, p.LeaderEpoch, p.StartOffset, batches); err != nil {
					rp.ErrorCode, rp.ErrorMessage = shareErrCode(err), errMessage(err)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}}
}
