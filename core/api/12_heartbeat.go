package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// Heartbeat v0-4.
func init() { reg(12, 0, 4, (*Broker).handleHeartbeat) }

func (b *Broker) handleHeartbeat(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.HeartbeatRequest)
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	var err error
	if b.Groups != nil {
		err = b.Groups.Heartbeat(group.HeartbeatRequest{Group: req.Group, MemberID: req.MemberID,
			InstanceID: req.InstanceID, Generation: req.Generation})
	}
	resp.ErrorCode = b.groupCode(err)
	return protocol.Reply{Resp: resp}
}
