package api

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/protocol"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
)

// StreamsGroupDescribe v0-1 (KIP-1071); v1 can ask for the topology
// description, which Gregor does not store (status NOT_STORED).
func init() { reg(89, 0, 1, (*Broker).handleStreamsGroupDescribe) }

// topologyDescriptionNotStored is StreamsGroupDescribe v1's status of a
// requested topology description the broker does not have.
const (
	topologyDescriptionNotRequested = 0
	topologyDescriptionNotStored    = 1
	topologyDescriptionStored       = 2
)

func (b *Broker) handleStreamsGroupDescribe(r *protocol.Request) protocol.Reply {
	req := r.Msg.(*kmsg.StreamsGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
	for _, id := range req.Groups {
		sg := kmsg.NewStreamsGroupDescribeResponseGroup()
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
		var d group.StreamsGroupDescription
		if b.Groups != nil {
			d, err = b.Groups.DescribeStreamsGroup(id)
		}
		if err != nil {
			sg.ErrorCode, sg.ErrorMessage = errCode(err), errMessage(err)
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		// Kafka hides a group whose topology reads topics the caller may
		// not describe.
		describe := b.topicAuth(r, sdkauth.OpDescribe)
		hidden := false
		for _, st := range d.Subtopologies {
			for _, t := range st.SourceTopics {
				hidden = hidden || !describe.allowed(t)
			}
		}
		if hidden {
			sg.ErrorCode = kerr.TopicAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, sg)
			continue
		}
		sg.State, sg.Epoch, sg.AssignmentEpoch = string(d.State), d.Epoch, d.AssignmentEpoch
		assignor := group.StreamsAssignor
		sg.AssignorName = &assignor
		sg.TopologyDescriptionStatus = topologyDescriptionNotRequested
		if req.IncludeTopologyDescription {
			sg.TopologyDescriptionStatus = topologyDescriptionNotStored
			if td, ok := d.Description.(kmsg.TopologyDescription); ok {
				sg.TopologyDescriptionStatus = topologyDescriptionStored
				sg.TopologyDescription = &kmsg.StreamsGroupDescribeResponseGroupTopologyDescription{Subtopologies: td.Subtopologies, GlobalStores: td.GlobalStores}
			}
		}
		if d.HasTopology {
			topo := kmsg.NewStreamsGroupDescribeResponseGroupTopology()
			topo.Epoch = d.TopologyEpoch
			if d.Subtopologies != nil {
				topo.Subtopologies = []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology{}
			}
			for _, st := range d.Subtopologies {
				s := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
				s.SubtopologyID, s.SourceTopics, s.RepartitionSinkTopics = st.ID, nonNilStrings(st.SourceTopics), nonNilStrings(st.RepartitionSinkTopics)
				s.StateChangelogTopics, s.RepartitionSourceTopics = kmsgTopicInfos(st.StateChangelogTopics), kmsgTopicInfos(st.RepartitionSourceTopics)
				topo.Subtopologies = append(topo.Subtopologies, s)
			}
			sg.Topology = &topo
		}
		for _, m := range d.Members {
			sm := kmsg.NewStreamsGroupDescribeResponseGroupMember()
			sm.MemberID, sm.MemberEpoch, sm.InstanceID, sm.RackID = m.MemberID, m.MemberEpoch, m.InstanceID, m.RackID
			sm.ClientID, sm.ClientHost, sm.TopologyEpoch, sm.ProcessID = m.ClientID, m.ClientHost, m.TopologyEpoch, m.ProcessID
			if m.UserEndpoint != nil {
				sm.UserEndpoint = &kmsg.StreamsGroupDescribeResponseGroupMemberUserEndpoint{Host: m.UserEndpoint.Host, Port: m.UserEndpoint.Port}
			}
			keys := make([]string, 0, len(m.ClientTags))
			for k := range m.ClientTags {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			sm.ClientTags = []kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{}
			for _, k := range keys {
				sm.ClientTags = append(sm.ClientTags, kmsg.StreamsGroupDescribeResponseGroupMemberClientTag{Key: k, Value: m.ClientTags[k]})
			}
			sm.TaskOffsets, sm.TaskEndOffsets = []kmsg.TaskOffset{}, []kmsg.TaskOffset{}
			sm.Assignment = streamsAssignment(m.Assignment)
			sm.TargetAssignment = streamsAssignment(m.Target)
			sg.Members = append(sg.Members, sm)
		}
		resp.Groups = append(resp.Groups, sg)
	}
	return protocol.Reply{Resp: resp}
}

func streamsAssignment(a [3][]group.StreamsTaskIDs) kmsg.StreamsAssignment {
	out := kmsg.NewStreamsAssignment()
	out.ActiveTasks, out.StandbyTasks, out.WarmupTasks = kmsgTaskIDs(a[0]), kmsgTaskIDs(a[1]), kmsgTaskIDs(a[2])
	return out
}

func kmsgTopicInfos(in []group.StreamsTopicInfo) []kmsg.TopicInfo {
	out := make([]kmsg.TopicInfo, 0, len(in))
	for _, ti := range in {
		k := kmsg.NewTopicInfo()
		k.Topic, k.NumPartitions, k.ReplicationFactor = ti.Name, ti.Partitions, ti.ReplicationFactor
		keys := make([]string, 0, len(ti.Configs))
		for c := range ti.Configs {
			keys = append(keys, c)
		}
		sort.Strings(keys)
		for _, c := range keys {
			k.Configs = append(k.Configs, kmsg.TopicInfoConfig{Key: c, Value: ti.Configs[c]})
		}
		out = append(out, k)
	}
	return out
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
