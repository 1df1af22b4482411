package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ReadShareGroupStateSummary v0-1 (KIP-932; v1 adds DeliveryCompleteCount,
// KIP-1226): a share-partition's start offset and epochs without its
// batches. Inter-broker only: ClusterAction on the cluster.
func init() { reg(87, 0, 1, (*Broker).handleReadShareGroupStateSummary) }

func (b *Broker) handleReadShareGroupStateSummary(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ReadShareGroupStateSummaryRequest)
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
	allowed := b.authorizeCluster(r, sdkauth.OpClusterAction)
	return protocol.Reply{Later: func() kmsg.Response {
		for _, t := range req.Topics {
			rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
				rp.Partition, rp.StartOffset, rp.LeaderEpoch = p.Partition, -1, -1
				if !allowed {
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
					rt.Partitions = append(rt.Partitions, rp)
					continue
				}
				st, ok, err := b.share().Store.Summary(shareStateKey(req.GroupID, t.TopicID, p.Partition), p.LeaderEpoch)
				switch {
				case err != nil:
					rp.ErrorCode, rp.ErrorMessage = shareErrCode(err), errMessage(err)
				case ok:
					rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = st.StateEpoch, st.LeaderEpoch, st.StartOffset
					rp.DeliveryCompleteCount = st.DeliveryComplete()
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}}
}
