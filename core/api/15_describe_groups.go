package api

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share/coordinator"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DescribeGroups v0-6; v6 answers GROUP_ID_NOT_FOUND for an unknown group
// (KIP-1043), older versions a group in state Dead.
func init() { reg(15, 0, 6, (*Broker).handleDescribeGroups) }

func (b *Broker) handleDescribeGroups(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		sg := kmsg.NewDescribeGroupsResponseGroup()
		sg.Group = id
		sg.AuthorizedOperations = authorizedOpsOmitted
		if !b.authorize(r, sdkauth.OpDescribe, sdkauth.ResourceGroup, id) {
			sg.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		if req.IncludeAuthorizedOperations {
			sg.AuthorizedOperations = b.authorizedOps(r, sdkauth.ResourceGroup, id, groupOps)
		}
		var d group.GroupDescription
		err := group.ErrCoordinatorNotAvailable
		if b.Groups != nil {
			d, err = b.Groups.DescribeGroup(id)
		}
		if errors.Is(err, group.ErrGroupIDNotFound) && b.share().Groups().Exists(id) {
			d.Type, err = coordinator.GroupType, nil
		}
		if err == nil && d.Type != group.TypeClassic {
			err = group.ErrGroupIDNotFound
			if r.Version >= 6 {
				msg := "Group " + id + " is not a classic group."
				sg.ErrorMessage = &msg
			}
		}
		switch {
		case errors.Is(err, group.ErrGroupIDNotFound):
			sg.State = string(group.StateDead)
			if r.Version >= 6 {
				sg.ErrorCode = kerr.GroupIDNotFound.Code
				if sg.ErrorMessage == nil {
					msg := "Group " + id + " not found."
					sg.ErrorMessage = &msg
				}
			}
		case err != nil:
			sg.ErrorCode = errCode(err)
		default:
			sg.State, sg.ProtocolType, sg.Protocol = string(d.State), d.ProtocolType, d.Protocol
			for _, m := range d.Members {
				sm := kmsg.NewDescribeGroupsResponseGroupMember()
				sm.MemberID, sm.InstanceID, sm.ClientID, sm.ClientHost = m.MemberID, m.InstanceID, m.ClientID, m.ClientHost
				sm.ProtocolMetadata, sm.MemberAssignment = m.Metadata, m.Assignment
				sg.Members = append(sg.Members, sm)
			}
		}
		resp.Groups = append(resp.Groups, sg)
	}
	return protocol.Reply{Resp: resp}
}
