package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// JoinGroup v0-9. A join usually waits for the rebalance, so the answer
// comes later.
func init() { reg(11, 0, 9, (*Broker).handleJoinGroup) }

func (b *Broker) handleJoinGroup(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.JoinGroupRequest)
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.Group) {
		resp := joinGroupResponse(r.Version, req, group.JoinResponse{MemberID: req.MemberID, Generation: -1})
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	if b.Groups == nil {
		return protocol.Reply{Resp: joinGroupResponse(r.Version, req, group.JoinResponse{Err: group.ErrCoordinatorNotAvailable,
			MemberID: req.MemberID, Generation: -1})}
	}
	jr := group.JoinRequest{
		Group: req.Group, MemberID: req.MemberID, InstanceID: req.InstanceID, ProtocolType: req.ProtocolType,
		SessionTimeout: millis(req.SessionTimeoutMillis), RebalanceTimeout: millis(req.RebalanceTimeoutMillis),
		ClientID: r.ClientID, RequireKnownMemberID: r.Version >= 4, SupportsSkipAssignment: r.Version >= 9,
	}
	if r.Conn != nil {
		jr.ClientHost = clientHost(r.Conn.Remote)
	}
	if r.Version == 0 {
		jr.RebalanceTimeout = jr.SessionTimeout
	}
	if req.Reason != nil {
		jr.Reason = *req.Reason
	}
	for _, p := range req.Protocols {
		jr.Protocols = append(jr.Protocols, group.Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	now, wait := b.Groups.JoinGroup(jr)
	if wait == nil {
		// A static member taking over its old id was stored.
		resp := joinGroupResponse(r.Version, req, now)
		if now.Err != nil {
			return protocol.Reply{Resp: resp}
		}
		return b.durableGroupReply(resp, func(code int16) { resp.ErrorCode = code }, req.Group)
	}
	return protocol.Reply{Later: func() kmsg.Response {
		select {
		case res := <-wait:
			if res.Err == nil {
				if err := b.SyncGroups(req.Group); err != nil {
					res = group.JoinResponse{Err: group.ErrStorage, MemberID: res.MemberID, Generation: -1}
				}
			}
			return joinGroupResponse(r.Version, req, res)
		case <-b.Done:
			return joinGroupResponse(r.Version, req, group.JoinResponse{Err: group.ErrNotCoordinator,
				MemberID: req.MemberID, Generation: -1})
		}
	}}
}

func joinGroupResponse(version int16, req *kmsg.JoinGroupRequest, res group.JoinResponse) *kmsg.JoinGroupResponse {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.ErrorCode = errCode(res.Err)
	resp.Generation, resp.LeaderID, resp.MemberID, resp.SkipAssignment = res.Generation, res.Leader, res.MemberID, res.SkipAssignment
	// v7+ has nullable protocol fields: null when there is no protocol.
	if version >= 7 {
		if res.ProtocolType != "" {
			pt := res.ProtocolType
			resp.ProtocolType = &pt
		}
		if res.Protocol != "" {
			p := res.Protocol
			resp.Protocol = &p
		}
	} else {
		p := res.Protocol
		resp.Protocol = &p
	}
	resp.Members = make([]kmsg.JoinGroupResponseMember, 0, len(res.Members))
	for _, m := range res.Members {
		rm := kmsg.NewJoinGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ProtocolMetadata = m.MemberID, m.InstanceID, m.Metadata
		if rm.ProtocolMetadata == nil {
			rm.ProtocolMetadata = []byte{}
		}
		resp.Members = append(resp.Members, rm)
	}
	return resp
}
