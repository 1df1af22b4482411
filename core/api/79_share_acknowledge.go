package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share"
	"github.com/gregorbroker/gregor/core/share/coordinator"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ShareAcknowledge v1-2 (KIP-932); v2 adds renew acknowledgements.
func init() { reg(79, 1, 2, (*Broker).handleShareAcknowledge) }

func (b *Broker) handleShareAcknowledge(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ShareAcknowledgeRequest)
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	fail := func(code int16, msg string) protocol.Reply {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return protocol.Reply{Resp: resp}
	}
	if req.GroupID == nil || *req.GroupID == "" || req.MemberID == nil || *req.MemberID == "" {
		return fail(kerr.InvalidRequest.Code, "ShareAcknowledge needs a group id and a member id")
	}
	groupID, member := *req.GroupID, *req.MemberID
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, groupID) {
		return fail(kerr.GroupAuthorizationFailed.Code, "")
	}
	st := b.share()
	_, closed, err := st.Sessions().Update(share.SessionUpdate{Group: groupID, Member: member,
		Epoch: req.ShareSessionEpoch, AckOnly: true})
	if err != nil {
		return fail(errCode(err), err.Error())
	}
	readAuth := b.topicAuth(r, sdkauth.OpRead)
	resp.AcquisitionLockTimeoutMillis = st.LockMillis(groupID)
	for _, t := range req.Topics {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		name, known := st.TopicName(t.TopicID)
		for _, p := range t.Partitions {
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = p.Partition
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			tp := share.TopicPartition{TopicID: t.TopicID, Partition: p.Partition}
			switch {
			case !known:
				rp.ErrorCode = kerr.UnknownTopicID.Code
			case !readAuth.allowed(name):
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			default:
				var acks []coordinator.Ack
				for _, ab := range p.AcknowledgementBatches {
					acks = append(acks, toShareAck(ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes))
				}
				if err := st.Acknowledge(groupID, member, tp, acks); err != nil {
					rp.ErrorCode, rp.ErrorMessage = shareErrCode(err), errMessage(err)
				}
				if leader, epoch, ok := st.Leadership(tp); ok {
					rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = leader, epoch
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if closed {
		st.ReleaseMember(groupID, member)
	}
	return protocol.Reply{Resp: resp}
}
