package api

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	"github.com/gregorbroker/gregor/core/share"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ShareGroupDescribe v1 (KIP-932).
func init() { reg(77, 1, 1, (*Broker).handleShareGroupDescribe) }

func (b *Broker) handleShareGroupDescribe(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ShareGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	topics := b.GroupTopics()
	for _, id := range req.GroupIDs {
		sg := kmsg.NewShareGroupDescribeResponseGroup()
		sg.GroupID = id
		sg.AuthorizedOperations = authorizedOpsOmitted
		if !b.authorize(r, sdkauth.OpDescribe, sdkauth.ResourceGroup, id) {
			sg.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		if req.IncludeAuthorizedOperations {
			sg.AuthorizedOperations = b.authorizedOps(r, sdkauth.ResourceGroup, id, groupOps)
		}
		if b.Groups == nil || b.Groups.Partition(id) == nil {
			sg.ErrorCode = kerr.NotCoordinator.Code
			if b.Groups == nil {
				sg.ErrorCode = kerr.CoordinatorNotAvailable.Code
			}
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		if err := b.share().LoadMembership(id); err != nil {
			sg.ErrorCode = shareErrCode(err)
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		d, err := b.share().Groups().Describe(id)
		if err != nil {
			sg.ErrorCode = kerr.GroupIDNotFound.Code
			msg := "Group " + id + " not found."
			if _, cerr := b.Groups.DescribeGroup(id); cerr == nil {
				msg = "Group " + id + " is not a share group."
			}
			sg.ErrorMessage = &msg
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		sg.GroupState, sg.GroupEpoch, sg.AssignmentEpoch, sg.Assignor = d.State, d.GroupEpoch, d.AssignmentEpoch, share.AssignorName
		for _, m := range d.Members {
			sm := kmsg.NewShareGroupDescribeResponseGroupMember()
			sm.MemberID, sm.MemberEpoch, sm.ClientID, sm.ClientHost = m.MemberID, m.MemberEpoch, m.ClientID, m.ClientHost
			if m.RackID != "" {
				rack := m.RackID
				sm.RackID = &rack
			}
			sm.SubscribedTopicNames = append([]string{}, m.Subscribed...)
			sm.Assignment = shareAssignment(m.Assignment, topics)
			sg.Members = append(sg.Members, sm)
		}
		resp.Groups = append(resp.Groups, sg)
	}
	return protocol.Reply{Resp: resp}
}

func shareAssignment(byTopic map[string][]int32, topics map[string]group.TopicInfo) kmsg.ShareGroupDescribeResponseGroupMemberAssignment {
	a := describedAssignment(byTopic, topics)
	out := kmsg.NewShareGroupDescribeResponseGroupMemberAssignment()
	for _, tp := range a.TopicPartitions {
		t := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
		t.TopicID, t.Topic, t.Partitions = tp.TopicID, tp.Topic, tp.Partitions
		out.TopicPartitions = append(out.TopicPartitions, t)
	}
	return out
}
