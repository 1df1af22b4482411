package api

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
)

// DeleteGroups v0-2.
func init() { reg(42, 0, 2, (*Broker).handleDeleteGroups) }

func (b *Broker) handleDeleteGroups(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	var errs []error
	if b.Groups != nil {
		errs = b.Groups.DeleteGroups(req.Groups)
	}
	for i, id := range req.Groups {
		sg := kmsg.NewDeleteGroupsResponseGroup()
		sg.Group = id
		if b.Groups == nil {
			sg.ErrorCode = errCode(group.ErrCoordinatorNotAvailable)
		} else {
			sg.ErrorCode = errCode(errs[i])
		}
		resp.Groups = append(resp.Groups, sg)
	}
	return protocol.Reply{Resp: resp}
}
