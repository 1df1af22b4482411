package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// SyncGroup v0-5. Followers wait for the leader's assignment.
func init() { reg(14, 0, 5, (*Broker).handleSyncGroup) }

func (b *Broker) handleSyncGroup(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.SyncGroupRequest)
	if !b.authorize(r, sdkauth.OpRead, sdkauth.ResourceGroup, req.Group) {
		resp := syncGroupResponse(r.Version, req, group.SyncResponse{})
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		resp.ProtocolType, resp.Protocol = nil, nil
		return protocol.Reply{Resp: resp}
	}
	if b.Groups == nil {
		return protocol.Reply{Resp: syncGroupResponse(r.Version, req, group.SyncResponse{Err: group.ErrCoordinatorNotAvailable})}
	}
	sr := group.SyncRequest{Group: req.Group, MemberID: req.MemberID, InstanceID: req.InstanceID, Generation: req.Generation}
	if r.Version >= 5 {
		sr.ProtocolType, sr.Protocol = req.ProtocolType, req.Protocol
	}
	if len(req.GroupAssignment) > 0 {
		sr.Assignments = make(map[string][]byte, len(req.GroupAssignment))
		for _, a := range req.GroupAssignment {
			sr.Assignments[a.MemberID] = a.MemberAssignment
		}
	}
	now, wait := b.Groups.SyncGroup(sr)
	if wait == nil {
		return protocol.Reply{Resp: syncGroupResponse(r.Version, req, now)}
	}
	return protocol.Reply{Later: func() kmsg.Response {
		select {
		case res := <-wait:
			// The leader's assignment is stored before any member gets it.
			if res.Err == nil {
				if err := b.SyncGroups(req.Group); err != nil {
					res = group.SyncResponse{Err: group.ErrStorage}
				}
			}
			return syncGroupResponse(r.Version, req, res)
		case <-b.Done:
			return syncGroupResponse(r.Version, req, group.SyncResponse{Err: group.ErrNotCoordinator})
		}
	}}
}

func syncGroupResponse(version int16, req *kmsg.SyncGroupRequest, res group.SyncResponse) *kmsg.SyncGroupResponse {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	resp.ErrorCode = errCode(res.Err)
	resp.MemberAssignment = res.Assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	if version >= 5 && res.Err == nil {
		pt, p := res.ProtocolType, res.Protocol
		resp.ProtocolType, resp.Protocol = &pt, &p
	}
	return resp
}
