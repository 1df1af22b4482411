package group

import (
	"time"

	"github.com/google/uuid"
)

// State is a group's state, named as Kafka names it in DescribeGroups and
// ListGroups.
type State string

// States of classic groups, and of consumer (KIP-848) groups.
const (
	StateEmpty               State = "Empty"
	StatePreparingRebalance  State = "PreparingRebalance"
	StateCompletingRebalance State = "CompletingRebalance"
	StateStable              State = "Stable"
	StateDead                State = "Dead"
	StateAssigning           State = "Assigning"
	StateReconciling         State = "Reconciling"
)

// Group types, as ListGroups v5 reports them.
const (
	TypeClassic  = "classic"
	TypeConsumer = "consumer"
)

// group is one group: its committed offsets and either its classic or its
// consumer (KIP-848) membership. Everything is guarded by its shard's lock.
type group struct {
	s        *shard
	id       string
	offsets  map[TopicPartition]Offset
	classic  *classicGroup
	consumer *consumerGroup
	streams  *streamsGroup
}

func newGroup(s *shard, id string) *group {
	return &group{s: s, id: id, offsets: map[TopicPartition]Offset{}}
}

// newClassicGroup adds an empty classic group to the shard.
func (s *shard) newClassicGroup(id string) *group {
	g := newGroup(s, id)
	g.classic = newClassic(g, s.now())
	s.groups[id] = g
	return g
}

func (g *group) state() State {
	if g.streams != nil {
		return g.streams.state()
	}
	if g.consumer != nil {
		return g.consumer.state()
	}
	return g.classic.state
}

func (g *group) typ() string {
	if g.streams != nil {
		return TypeStreams
	}
	if g.consumer != nil {
		return TypeConsumer
	}
	return TypeClassic
}

func (g *group) protocolType() string {
	if g.streams != nil {
		return TypeStreams
	}
	if g.consumer != nil {
		return "consumer"
	}
	return g.classic.protocolType
}

// empty says whether the group has no members.
func (g *group) empty() bool {
	if g.streams != nil {
		return len(g.streams.members) == 0
	}
	if g.consumer != nil {
		return len(g.consumer.members) == 0
	}
	return len(g.classic.members) == 0 && len(g.classic.pending) == 0
}

// shutdown answers every waiting member with NOT_COORDINATOR and stops the
// group's timers; the shard is resigning.
func (g *group) shutdown() {
	if g.classic != nil {
		g.classic.shutdown()
	}
	if g.consumer != nil {
		g.consumer.shutdown()
	}
	if g.streams != nil {
		g.streams.shutdown()
	}
}

// subscribedTopics is the set of topics the group's members consume, and
// whether it is known (a classic group of another protocol type, or a
// member whose subscription does not parse, makes it unknown).
func (g *group) subscribedTopics() (map[string]bool, bool) {
	if g.consumer != nil {
		return g.consumer.subscribedTopics(), true
	}
	if g.streams != nil {
		return g.streams.subscribedTopics(), true
	}
	return g.classic.subscribedTopics()
}

// newMemberID is Kafka's member id: the client id (or instance id) and a
// random UUID.
func newMemberID(prefix string) string { return prefix + "-" + uuid.NewString() }

func ms(d time.Duration) int32 { return int32(d / time.Millisecond) }
