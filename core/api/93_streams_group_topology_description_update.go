package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// StreamsGroupTopologyDescriptionUpdate v0 (KIP-1331): a member of a
// streams group sends its full topology description, which
// StreamsGroupDescribe v1 then shows. Authorized as StreamsGroupHeartbeat:
// READ on the group.
func init() { reg(93, 0, 0, (*Broker).handleStreamsGroupTopologyDescriptionUpdate) }

func (b *Broker) handleStreamsGroupTopologyDescriptionUpdate(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.StreamsGroupTopologyDescriptionUpdateRequest)
	resp := req.ResponseKind().(*kmsg.StreamsGroupTopologyDescriptionUpdateResponse)
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return protocol.Reply{Resp: resp}
	}
	if b.Groups == nil {
		resp.ErrorCode = b.groupCode(nil)
		return protocol.Reply{Resp: resp}
	}
	if err := b.Groups.UpdateStreamsTopologyDescription(req.Group, req.MemberID, req.TopologyEpoch, req.TopologyDescription); err != nil {
		resp.ErrorCode, resp.ErrorMessage = errCode(err), errMessage(err)
	}
	return protocol.Reply{Resp: resp}
}
