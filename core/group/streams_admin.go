package group

import (
	"fmt"
	"sort"
)

// StreamsMemberDescription is a streams group member as
// StreamsGroupDescribe shows it.
type StreamsMemberDescription struct {
	MemberID      string
	MemberEpoch   int32
	InstanceID    *string
	RackID        *string
	ClientID      string
	ClientHost    string
	TopologyEpoch int32
	ProcessID     string
	UserEndpoint  *StreamsEndpoint
	ClientTags    map[string]string
	// Assignment and Target are by kind: active, standby, warmup.
	Assignment [3][]StreamsTaskIDs
	Target     [3][]StreamsTaskIDs
}

// StreamsGroupDescription is a streams group.
type StreamsGroupDescription struct {
	Group           string
	State           State
	Epoch           int32
	AssignmentEpoch int32
	// Topology is nil before a member joined; Subtopologies is nil while
	// the topology is not ready.
	TopologyEpoch int32
	Subtopologies []StreamsSubtopology
	HasTopology   bool
	// Description is what a member sent with
	// StreamsGroupTopologyDescriptionUpdate for TopologyEpoch, or nil.
	Description any
	Members     []StreamsMemberDescription
}

// StreamsAssignor is the name of the task assignor of streams groups.
const StreamsAssignor = "sticky"

// DescribeStreamsGroup describes a streams group; a missing group, or one
// of another type, is ErrGroupIDNotFound.
func (c *Coordinator) DescribeStreamsGroup(id string) (StreamsGroupDescription, error) {
	s, err := c.lockShard(id)
	if err != nil {
		return StreamsGroupDescription{}, err
	}
	defer s.mu.Unlock()
	g := s.group(id)
	if g == nil {
		return StreamsGroupDescription{}, fmt.Errorf("%w: group %s not found", ErrGroupIDNotFound, id)
	}
	if g.streams == nil {
		return StreamsGroupDescription{}, fmt.Errorf("%w: group %s is not a streams group", ErrGroupIDNotFound, id)
	}
	sg := g.streams
	d := StreamsGroupDescription{Group: id, State: sg.state(), Epoch: sg.epoch, AssignmentEpoch: sg.assignmentEpoch}
	if sg.topology != nil {
		d.HasTopology, d.TopologyEpoch = true, sg.topology.Epoch
		d.Description = sg.describedTopology()
		if sg.configured.ready() {
			d.Subtopologies = sg.describedSubtopologies()
		}
	}
	ids := make([]string, 0, len(sg.members))
	for mid := range sg.members {
		ids = append(ids, mid)
	}
	sort.Strings(ids)
	for _, mid := range ids {
		m := sg.members[mid]
		md := StreamsMemberDescription{MemberID: m.id, MemberEpoch: m.epoch, InstanceID: m.instanceID, RackID: m.rackID,
			ClientID: m.clientID, ClientHost: m.clientHost, TopologyEpoch: m.topologyEpoch, ProcessID: m.processID,
			UserEndpoint: m.endpoint, ClientTags: m.clientTags}
		md.Assignment = [3][]StreamsTaskIDs{taskIDs(m.assigned.active), taskIDs(m.assigned.standby), taskIDs(m.assigned.warmup)}
		t, ok := sg.target[mid]
		if !ok {
			t = newStreamsTasks()
		}
		md.Target = [3][]StreamsTaskIDs{taskIDs(t.active), taskIDs(t.standby), taskIDs(t.warmup)}
		d.Members = append(d.Members, md)
	}
	return d, nil
}

// describedSubtopologies is the configured topology as Kafka describes it:
// source topics resolved, internal topics with their partition counts.
func (sg *streamsGroup) describedSubtopologies() []StreamsSubtopology {
	out := make([]StreamsSubtopology, 0, len(sg.topology.Subtopologies))
	for _, st := range sg.topology.Subtopologies {
		n := sg.configured.tasks[st.ID]
		d := StreamsSubtopology{ID: st.ID, RepartitionSinkTopics: st.RepartitionSinkTopics}
		for _, t := range sg.configured.sources[st.ID] {
			internal := false
			for _, ti := range st.RepartitionSourceTopics {
				internal = internal || ti.Name == t
			}
			if !internal {
				d.SourceTopics = append(d.SourceTopics, t)
			}
		}
		for _, ti := range st.StateChangelogTopics {
			ti.Partitions = n
			d.StateChangelogTopics = append(d.StateChangelogTopics, ti)
		}
		for _, ti := range st.RepartitionSourceTopics {
			ti.Partitions = sg.configured.internal[ti.Name]
			d.RepartitionSourceTopics = append(d.RepartitionSourceTopics, ti)
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
