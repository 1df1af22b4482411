package api

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ShareGroupHeartbeat v1 (KIP-932): Kafka 4.1 removed the early-access v0.
func init() { reg(76, 1, 1, (*Broker).handleShareGroupHeartbeat) }

func (b *Broker) handleShareGroupHeartbeat(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ShareGroupHeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	fail := func(code int16, msg string) protocol.Reply {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = &msg
		}
		return protocol.Reply{Resp: resp}
	}
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.GroupID) {
		return fail(kerr.GroupAuthorizationFailed.Code, "")
	}
	describe := b.topicAuth(r, sdkauth.OpDescribe)
	for _, t := range req.SubscribedTopicNames {
		if !describe.allowed(t) {
			return fail(kerr.TopicAuthorizationFailed.Code, "")
		}
	}
	if code := b.shareCoordinatorCode(req.GroupID); code != 0 {
		return fail(code, "")
	}
	hr := share.HeartbeatRequest{GroupID: req.GroupID, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch,
		RackID: req.RackID, Subscribed: req.SubscribedTopicNames, ClientID: r.ClientID}
	if r.Conn != nil {
		hr.ClientHost = clientHost(r.Conn.Remote)
	}
	st := b.share()
	if err := st.LoadMembership(req.GroupID); err != nil {
		return fail(shareErrCode(err), err.Error())
	}
	res, err := st.Groups().Heartbeat(hr)
	if err != nil {
		return fail(errCode(err), err.Error())
	}
	// A new epoch (a join, an assignment, a leave) is durable before it
	// is answered.
	if req.MemberEpoch == -1 || res.MemberEpoch != req.MemberEpoch {
		if err := st.PersistMembership(req.GroupID); err != nil {
			return fail(shareErrCode(err), err.Error())
		}
	}
	id := req.MemberID
	resp.MemberID = &id
	resp.MemberEpoch = res.MemberEpoch
	resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval.Milliseconds())
	if res.Assignment != nil {
		a := kmsg.NewShareGroupHeartbeatResponseAssignment()
		topics := b.GroupTopics()
		names := make([]string, 0, len(res.Assignment))
		for t := range res.Assignment {
			names = append(names, t)
		}
		sort.Strings(names)
		for _, t := range names {
			tp := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
			tp.TopicID, tp.Partitions = topics[t].ID, res.Assignment[t]
			a.TopicPartitions = append(a.TopicPartitions, tp)
		}
		resp.Assignment = &a
	}
	return protocol.Reply{Resp: resp}
}

// shareCoordinatorCode is the error for a share group request to a broker
// that is not the group's coordinator (the leader of its __consumer_offsets
// partition), or whose id a classic or consumer group already holds.
func (b *Broker) shareCoordinatorCode(groupID string) int16 {
	if b.Groups == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	if b.Groups.Partition(groupID) == nil {
		return kerr.NotCoordinator.Code
	}
	if _, err := b.Groups.DescribeGroup(groupID); err == nil {
		return kerr.GroupIDNotFound.Code // Kafka: "Group ... is not a share group."
	}
	return 0
}
