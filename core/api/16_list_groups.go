package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share/coordinator"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ListGroups v0-5: a states filter from v4, a types filter from v5.
func init() { reg(16, 0, 5, (*Broker).handleListGroups) }

func (b *Broker) handleListGroups(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	if b.Groups == nil {
		resp.ErrorCode = b.groupCode(nil)
		return protocol.Reply{Resp: resp}
	}
	var states, types []string
	if r.Version >= 4 {
		states = req.StatesFilter
	}
	if r.Version >= 5 {
		types = req.TypesFilter
	}
	groups, err := b.Groups.ListGroups(states, types)
	resp.ErrorCode = errCode(err)
	for _, g := range b.share().List(states, types) {
		groups = append(groups, group.GroupListing{Group: g.GroupID, ProtocolType: coordinator.GroupType, State: group.State(g.State), Type: coordinator.GroupType})
	}
	// Kafka: DESCRIBE on the cluster lists every group; otherwise only the
	// groups the principal may describe are listed.
	all := b.authorizeCluster(r, sdkauth.OpDescribe)
	for _, g := range groups {
		if !all && !b.authorize(r, sdkauth.OpDescribe, sdkauth.ResourceGroup, g.Group) {
			continue
		}
		sg := kmsg.NewListGroupsResponseGroup()
		sg.Group, sg.ProtocolType, sg.GroupState, sg.GroupType = g.Group, g.ProtocolType, string(g.State), g.Type
		resp.Groups = append(resp.Groups, sg)
	}
	return protocol.Reply{Resp: resp}
}
