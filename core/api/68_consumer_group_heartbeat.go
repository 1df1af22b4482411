package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ConsumerGroupHeartbeat v0-1 (KIP-848); v1 has client-chosen member ids
// and regular expression subscriptions.
func init() {
	reg(68, 0, 1, (*Broker).handleConsumerGroupHeartbeat)
}

func (b *Broker) handleConsumerGroupHeartbeat(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ConsumerGroupHeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	// Kafka needs DESCRIBE on every topic a member subscribes to by name.
	describe := b.topicAuth(r, sdkauth.OpDescribe)
	for _, t := range req.SubscribedTopicNames {
		if !describe.allowed(t) {
			resp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			return protocol.Reply{Resp: resp}
		}
	}
	if b.Groups == nil {
		resp.ErrorCode = b.groupCode(nil)
		return protocol.Reply{Resp: resp}
	}
	hr := group.ConsumerHeartbeatRequest{
		Group: req.Group, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch, InstanceID: req.InstanceID,
		RackID: req.RackID, RebalanceTimeout: millis(req.RebalanceTimeoutMillis), SubscribedTopics: req.SubscribedTopicNames,
		ServerAssignor: req.ServerAssignor, ClientID: r.ClientID, ClientMemberID: r.Version >= 1,
	}
	if req.RebalanceTimeoutMillis < 0 {
		hr.RebalanceTimeout = -1
	}
	if r.Version >= 1 {
		hr.SubscribedRegex = req.SubscribedTopicRegex
	}
	if r.Conn != nil {
		hr.ClientHost = clientHost(r.Conn.Remote)
	}
	if req.Topics != nil {
		hr.Owned = make([]group.TopicPartitions, 0, len(req.Topics))
		for _, t := range req.Topics {
			hr.Owned = append(hr.Owned, group.TopicPartitions{TopicID: t.TopicID, Partitions: t.Partitions})
		}
	}
	res := b.Groups.ConsumerHeartbeat(hr)
	resp.ErrorCode = errCode(res.Err)
	if res.Err != nil {
		resp.ErrorMessage = errMessage(res.Err)
		return protocol.Reply{Resp: resp}
	}
	id := res.MemberID
	resp.MemberID = &id
	resp.MemberEpoch = res.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval.Milliseconds())
	if res.Assignment != nil {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, tp := range res.Assignment {
			t := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			t.TopicID, t.Partitions = tp.TopicID, tp.Partitions
			a.Topics = append(a.Topics, t)
		}
		resp.Assignment = &a
	}
	return b.durableGroupReply(resp, func(code int16) {
		resp.ErrorCode, resp.Assignment = code, nil
	}, req.Group)
}
