package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DeleteShareGroupState v0 (KIP-932): the share coordinator forgets a
// share-partition's state (a tombstone, answered once replicated).
// Inter-broker only: ClusterAction on the cluster.
func init() { reg(86, 0, 0, (*Broker).handleDeleteShareGroupState) }

func (b *Broker) handleDeleteShareGroupState(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DeleteShareGroupStateRequest)
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
	allowed := b.authorizeCluster(r, sdkauth.OpClusterAction)
	// The tombstone waits for the ISR.
	return protocol.Reply{Later: func() kmsg.Response {
		for _, t := range req.Topics {
			rt := kmsg.NewDeleteShareGroupStateResponseTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
				rp.Partition = p.Partition
				if !allowed {
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				} else if err := b.share().Store.Delete(shareStateKey(req.GroupID, t.TopicID, p.Partition)); err != nil {
					rp.ErrorCode, rp.ErrorMessage = shareErrCode(err), errMessage(err)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}}
}
