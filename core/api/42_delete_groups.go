package api

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// DeleteGroups v0-3; v3 adds a message to each group's error.
func init() { reg(42, 0, 3, (*Broker).handleDeleteGroups) }

func (b *Broker) handleDeleteGroups(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	// Kafka: DELETE on each group; refused ones are not touched.
	allowed := b.authorizeAll(r, sdkauth.OpDelete, sdkauth.ResourceGroup, req.Groups)
	var ids []string
	for i, id := range req.Groups {
		if allowed[i] {
			ids = append(ids, id)
		}
	}
	var errs []error
	if b.Groups != nil && len(ids) > 0 {
		errs = b.Groups.DeleteGroups(ids)
	}
	for i, id := range req.Groups {
		sg := kmsg.NewDeleteGroupsResponseGroup()
		sg.Group = id
		switch {
		case !allowed[i]:
			sg.ErrorCode = kerr.GroupAuthorizationFailed.Code
		case b.Groups == nil:
			sg.ErrorCode = errCode(group.ErrCoordinatorNotAvailable)
		default:
			err := errs[0]
			errs = errs[1:]
			if errors.Is(err, group.ErrGroupIDNotFound) && b.share().Groups().Exists(id) {
				err = b.share().DeleteGroup(id)
			}
			sg.ErrorCode = errCode(err)
		}
		if sg.ErrorCode != 0 && r.Version >= 3 {
			sg.ErrorMessage = strPtr(kerr.ErrorForCode(sg.ErrorCode).(*kerr.Error).Message)
		}
		resp.Groups = append(resp.Groups, sg)
	}
	return b.durableGroupReply(resp, func(code int16) {
		for i := range resp.Groups {
			if resp.Groups[i].ErrorCode == 0 {
				resp.Groups[i].ErrorCode = code
			}
		}
	}, ids...)
}
