package group

import (
	"fmt"
	"hash/fnv"
	"sort"
	"time"
)

// TypeStreams is the type of a streams group (KIP-1071) in ListGroups.
const TypeStreams = "streams"

// StateNotReady is a streams group whose topology cannot be set up yet: its
// source topics are missing or wrongly partitioned, or its internal topics
// are being created.
const StateNotReady State = "NotReady"

// streamsGroup is the membership of a streams group: Kafka Streams members
// heartbeat with their topology and the coordinator assigns tasks. Its
// state is written to __consumer_offsets (streams_persist.go), so after a
// restart or a move of the coordinator members carry on at their epochs.
type streamsGroup struct {
	g               *group
	epoch           int32 // the group epoch
	assignmentEpoch int32 // the group epoch the target assignment was computed for
	topology        *StreamsTopology
	configured      configuredTopology
	members         map[string]*streamsMember
	instances       map[string]string // group.instance.id -> member id
	target          map[string]streamsTasks
	metaHash        uint64
	endpointEpoch   int32 // bumped when the assignment of tasks to endpoints changes
	shutdownRequest bool  // a member asked the whole application to shut down
	stateTime       time.Time
	// standbyReplicas is the number of standby replicas the target
	// assignment was computed with; a change of the group's
	// streams.num.standby.replicas recomputes it.
	standbyReplicas int
	// persisted is what the group's records in __consumer_offsets say, by
	// key; allDirty says that membership or the target assignment changed
	// since they were last written.
	persisted map[string][]byte
	allDirty  bool
	// description is the topology description a member sent for
	// descriptionEpoch (streams_description.go); in memory only.
	description      any
	descriptionEpoch int32
}

// streamsMember is a member of a streams group.
type streamsMember struct {
	id               string
	instanceID       *string
	rackID           *string
	clientID         string
	clientHost       string
	processID        string
	endpoint         *StreamsEndpoint
	clientTags       map[string]string
	topologyEpoch    int32
	epoch            int32
	previousEpoch    int32
	state            memberState
	rebalanceTimeout time.Duration
	assigned         streamsTasks // what the member owns at its epoch
	revoking         streamsTasks // what it must give up
	lastSent         *streamsTasks
	departed         bool // a static member that left for a moment (epoch -2)
	needEndpoints    bool // restored from the log: send the endpoints at the next heartbeat
	session          deadline
	revocation       deadline
}

func newStreamsGroup(g *group, now time.Time) *streamsGroup {
	return &streamsGroup{g: g, members: map[string]*streamsMember{}, instances: map[string]string{},
		target: map[string]streamsTasks{}, stateTime: now, persisted: map[string][]byte{}}
}

func (sg *streamsGroup) state() State {
	switch {
	case len(sg.members) == 0:
		return StateEmpty
	case !sg.configured.ready():
		return StateNotReady
	case sg.assignmentEpoch < sg.epoch:
		return StateAssigning
	}
	for _, m := range sg.members {
		if m.epoch != sg.assignmentEpoch || m.state != memberStable {
			return StateReconciling
		}
	}
	return StateStable
}

func (sg *streamsGroup) shutdown() {
	for _, m := range sg.members {
		m.session.stop()
		m.revocation.stop()
	}
}

// subscribedTopics is every input topic of the topology.
func (sg *streamsGroup) subscribedTopics() map[string]bool {
	out := map[string]bool{}
	for _, srcs := range sg.configured.sources {
		for _, t := range srcs {
			out[t] = true
		}
	}
	if sg.topology != nil {
		for _, st := range sg.topology.Subtopologies {
			for _, t := range st.SourceTopics {
				out[t] = true
			}
		}
	}
	return out
}

// validateStreamsCommit checks an offset commit against a streams group as
// validateConsumerCommit does for consumer groups.
func (sg *streamsGroup) validateCommit(memberID string, epoch int32) error {
	if epoch < 0 && memberID == "" && len(sg.members) == 0 {
		return nil
	}
	m := sg.members[memberID]
	if m == nil {
		return ErrUnknownMemberID
	}
	if epoch > 0 && epoch == m.previousEpoch && epoch < m.epoch {
		return nil
	}
	return validateMemberEpoch(epoch, m.epoch)
}

func (sg *streamsGroup) validateFetch(memberID string, epoch int32) error {
	m := sg.members[memberID]
	if m == nil {
		return ErrUnknownMemberID
	}
	return validateMemberEpoch(epoch, m.epoch)
}

// metadataHash fingerprints the topics the topology reads and writes.
func (sg *streamsGroup) metadataHash(topics map[string]TopicInfo) uint64 {
	if sg.topology == nil {
		return 0
	}
	names := map[string]bool{}
	for _, st := range sg.topology.Subtopologies {
		for _, t := range st.SourceTopics {
			names[t] = true
		}
		for _, ti := range st.RepartitionSourceTopics {
			names[ti.Name] = true
		}
		for _, ti := range st.StateChangelogTopics {
			names[ti.Name] = true
		}
	}
	for _, srcs := range configureTopology(sg.topology, topics).sources {
		for _, t := range srcs {
			names[t] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for t := range names {
		sorted = append(sorted, t)
	}
	sort.Strings(sorted)
	h := fnv.New64a()
	for _, t := range sorted {
		ti, ok := topics[t]
		fmt.Fprintf(h, "%s/%v/%x/%d;", t, ok, ti.ID, ti.Partitions)
	}
	return h.Sum64()
}

// computeTarget recomputes the target assignment for the group epoch.
func (sg *streamsGroup) computeTarget(standbyReplicas int, topics map[string]TopicInfo) {
	sg.configured = configureTopology(sg.topology, topics)
	in := streamsAssignInput{tasks: sg.configured.tasks, standbyReplicas: standbyReplicas}
	ids := make([]string, 0, len(sg.members))
	for id := range sg.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		m := sg.members[id]
		prev, ok := sg.target[id]
		if !ok {
			prev = m.assigned
		}
		in.members = append(in.members, streamsAssignMember{id: id, process: m.processID, prev: prev})
	}
	sg.target = assignStreamsTasks(in)
	sg.assignmentEpoch = sg.epoch
	sg.standbyReplicas = standbyReplicas
	sg.endpointEpoch++
	sg.allDirty = true
}

// activeOwnedByOthers says whether another member still owns or is revoking
// t as an active task.
func (sg *streamsGroup) activeOwnedByOthers(self *streamsMember, t streamsTask) bool {
	for _, o := range sg.members {
		if o != self && (o.assigned.active[t] || o.revoking.active[t]) {
			return true
		}
	}
	return false
}
