package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// LeaveGroup v0-5; v3+ batches members (KIP-345).
func init() { reg(13, 0, 5, (*Broker).handleLeaveGroup) }

func (b *Broker) handleLeaveGroup(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.LeaveGroupRequest)
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	var leaving []group.LeavingMember
	if r.Version < 3 {
		leaving = []group.LeavingMember{{MemberID: req.MemberID}}
	} else {
		for _, m := range req.Members {
			lm := group.LeavingMember{MemberID: m.MemberID, InstanceID: m.InstanceID}
			if m.Reason != nil {
				lm.Reason = *m.Reason
			}
			leaving = append(leaving, lm)
		}
	}
	var errs []error
	var err error
	if b.Groups != nil {
		errs, err = b.Groups.LeaveGroup(req.Group, leaving)
	}
	resp.ErrorCode = b.groupCode(err)
	if b.Groups == nil || err != nil {
		return protocol.Reply{Resp: resp}
	}
	if r.Version < 3 {
		// One member: its error is the request's.
		resp.ErrorCode = errCode(errs[0])
		return b.durableGroupReply(resp, func(code int16) { resp.ErrorCode = code }, req.Group)
	}
	for i, m := range req.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = m.MemberID, m.InstanceID, errCode(errs[i])
		resp.Members = append(resp.Members, rm)
	}
	return b.durableGroupReply(resp, func(code int16) { resp.ErrorCode = code }, req.Group)
}
