package api

import (
	"errors"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// ConsumerGroupDescribe v0-1 (KIP-848).
func init() { reg(69, 0, 1, (*Broker).handleConsumerGroupDescribe) }

// memberTypeConsumer is ConsumerGroupDescribe v1's member type of a member
// using the consumer protocol.
const memberTypeConsumer = 1

func (b *Broker) handleConsumerGroupDescribe(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.ConsumerGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	topics := b.GroupTopics()
	for _, id := range req.Groups {
		sg := kmsg.NewConsumerGroupDescribeResponseGroup()
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
		err := group.ErrCoordinatorNotAvailable
		var d group.ConsumerGroupDescription
		if b.Groups != nil {
			d, err = b.Groups.DescribeConsumerGroup(id)
		}
		if err != nil {
			sg.ErrorCode, sg.ErrorMessage = errCode(err), errMessage(err)
			if errors.Is(err, group.ErrGroupIDNotFound) && b.share().Groups().Exists(id) {
				msg := "Group " + id + " is not a consumer group."
				sg.ErrorMessage = &msg
			}
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		// Kafka hides a group whose members consume topics the caller may
		// not describe.
		describe := b.topicAuth(r, sdkauth.OpDescribe)
		hidden := false
		for _, m := range d.Members {
			for t := range m.Assignment {
				hidden = hidden || !describe.allowed(t)
			}
		}
		if hidden {
			sg.ErrorCode = kerr.TopicAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		sg.State, sg.Epoch, sg.AssignmentEpoch, sg.AssignorName = string(d.State), d.Epoch, d.AssignmentEpoch, d.Assignor
		for _, m := range d.Members {
			sm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			sm.MemberID, sm.InstanceID, sm.RackID, sm.MemberEpoch = m.MemberID, m.InstanceID, m.RackID, m.MemberEpoch
			sm.ClientID, sm.ClientHost, sm.SubscribedTopics, sm.SubscribedTopicRegex = m.ClientID, m.ClientHost, m.SubscribedTopics, m.SubscribedRegex
			if sm.SubscribedTopics == nil {
				sm.SubscribedTopics = []string{}
			}
			sm.Assignment = describedAssignment(m.Assignment, topics)
			sm.TargetAssignment = describedAssignment(m.Target, topics)
			sm.MemberType = memberTypeConsumer
			sg.Members = append(sg.Members, sm)
		}
		resp.Groups = append(resp.Groups, sg)
	}
	return protocol.Reply{Resp: resp}
}

func describedAssignment(byTopic map[string][]int32, topics map[string]group.TopicInfo) kmsg.Assignment {
	a := kmsg.NewAssignment()
	names := make([]string, 0, len(byTopic))
	for t := range byTopic {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		tp := kmsg.NewAssignmentTopicPartition()
		tp.Topic, tp.TopicID, tp.Partitions = t, topics[t].ID, byTopic[t]
		a.TopicPartitions = append(a.TopicPartitions, tp)
	}
	return a
}
