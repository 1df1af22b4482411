package group

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"time"
)

// memberState is where a consumer group member is in reconciling its
// assignment with the target assignment (Kafka's MemberState).
type memberState int

const (
	memberStable     memberState = iota
	memberUnrevoked              // must give up partitions before its epoch advances
	memberUnreleased             // at the target epoch, waiting for partitions others still own
)

// partSet is a set of partitions.
type partSet map[topicPart]bool

func (s partSet) sorted() map[string][]int32 {
	out := map[string][]int32{}
	for tp := range s {
		out[tp.topic] = append(out[tp.topic], tp.partition)
	}
	for t := range out {
		sort.Slice(out[t], func(i, j int) bool { return out[t][i] < out[t][j] })
	}
	return out
}

func setOf(m map[string][]int32) partSet {
	s := partSet{}
	for t, ps := range m {
		for _, p := range ps {
			s[topicPart{t, p}] = true
		}
	}
	return s
}

func (s partSet) equal(o partSet) bool {
	if len(s) != len(o) {
		return false
	}
	for tp := range s {
		if !o[tp] {
			return false
		}
	}
	return true
}

// consumerGroup is the membership of a consumer group of KIP-848: members
// heartbeat with their subscriptions and the coordinator assigns partitions.
// Its state is written to __consumer_offsets (consumer_persist.go), so after
// a restart or a leadership change members carry on at their epochs with
// their assignments.
type consumerGroup struct {
	g               *group
	epoch           int32 // the group epoch, bumped when members or subscriptions change
	assignmentEpoch int32 // the group epoch the target assignment was computed for
	members         map[string]*consumerMember
	instances       map[string]string // group.instance.id -> member id
	target          assignment
	assignor        string
	metaHash        uint64 // fingerprint of the subscribed topics' metadata
	stateTime       time.Time
	// persisted is what the group's records in __consumer_offsets say, by
	// key; allDirty says that membership or the target assignment changed
	// since they were last written, and tombstoneClassic that the group was
	// a classic group whose metadata record must go.
	persisted        map[string][]byte
	allDirty         bool
	tombstoneClassic bool
}

// consumerMember is a member of a consumer group.
type consumerMember struct {
	id               string
	instanceID       *string
	rackID           *string
	clientID         string
	clientHost       string
	epoch            int32
	previousEpoch    int32
	state            memberState
	rebalanceTimeout time.Duration
	topics           []string // subscribed topic names, sorted
	regex            *string
	assignor         string
	assigned         partSet // what the member owns at its epoch
	revoking         partSet // what it must give up
	lastSent         partSet // the assignment last sent to it
	departed         bool    // a static member that left temporarily (epoch -2)
	session          deadline
	revocation       deadline
}

func newConsumerGroup(g *group, now time.Time) *consumerGroup {
	return &consumerGroup{g: g, members: map[string]*consumerMember{}, instances: map[string]string{},
		target: assignment{}, stateTime: now, persisted: map[string][]byte{}}
}

func (cg *consumerGroup) state() State {
	if len(cg.members) == 0 {
		return StateEmpty
	}
	if cg.assignmentEpoch < cg.epoch {
		return StateAssigning
	}
	for _, m := range cg.members {
		if m.epoch != cg.assignmentEpoch || m.state != memberStable {
			return StateReconciling
		}
	}
	return StateStable
}

func (cg *consumerGroup) subscribedTopics() map[string]bool {
	out := map[string]bool{}
	for _, m := range cg.members {
		for _, t := range m.topics {
			out[t] = true
		}
	}
	return out
}

func (cg *consumerGroup) shutdown() {
	for _, m := range cg.members {
		m.session.stop()
		m.revocation.stop()
	}
}

// validateMemberEpoch is Kafka's check of a member epoch sent with an offset
// commit or fetch.
func validateMemberEpoch(got, want int32) error {
	switch {
	case got > want:
		return fmt.Errorf("%w: %d, the member is at epoch %d", ErrFencedMemberEpoch, got, want)
	case got < want:
		return fmt.Errorf("%w: %d, the member is at epoch %d", ErrStaleMemberEpoch, got, want)
	}
	return nil
}

func (cg *consumerGroup) validateFetch(memberID string, epoch int32) error {
	m := cg.members[memberID]
	if m == nil {
		return ErrUnknownMemberID
	}
	return validateMemberEpoch(epoch, m.epoch)
}

// validateConsumerCommit checks an offset commit against a consumer group:
// one without a member id commits only into an empty group. A commit from
// the member's previous epoch is accepted: it was made for partitions the
// member owned until its last heartbeat moved it on.
func (s *shard) validateConsumerCommit(g *group, memberID string, epoch int32) error {
	cg := g.consumer
	if epoch < 0 && memberID == "" && len(cg.members) == 0 {
		return nil
	}
	m := cg.members[memberID]
	if m == nil {
		return ErrUnknownMemberID
	}
	if epoch > 0 && epoch == m.previousEpoch && epoch < m.epoch {
		return nil
	}
	return validateMemberEpoch(epoch, m.epoch)
}

// resolveTopics is the member's subscription against the topics that exist:
// its names, and the topics its regular expression matches.
func resolveTopics(m *consumerMember, topics map[string]TopicInfo) []string {
	var out []string
	for _, t := range m.topics {
		if _, ok := topics[t]; ok {
			out = append(out, t)
		}
	}
	if m.regex != nil {
		if re, err := regexp.Compile("^(?:" + *m.regex + ")$"); err == nil {
			for t := range topics {
				if re.MatchString(t) && !contains(out, t) {
					out = append(out, t)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// metadataHash fingerprints what the target assignment depends on besides
// the members: every subscribed topic's id and partition count.
func (cg *consumerGroup) metadataHash(topics map[string]TopicInfo) uint64 {
	names := map[string]bool{}
	for _, m := range cg.members {
		for _, t := range resolveTopics(m, topics) {
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
		ti := topics[t]
		fmt.Fprintf(h, "%s/%x/%d;", t, ti.ID, ti.Partitions)
	}
	return h.Sum64()
}

// computeTarget recomputes the target assignment for the group epoch.
func (cg *consumerGroup) computeTarget(defaultAssignor string, topics map[string]TopicInfo) {
	in := assignInput{subscribed: map[string][]string{}, partitions: map[string]int32{}, previous: cg.target}
	votes := map[string]int{}
	for id, m := range cg.members {
		in.members = append(in.members, id)
		in.subscribed[id] = resolveTopics(m, topics)
		for _, t := range in.subscribed[id] {
			in.partitions[t] = topics[t].Partitions
		}
		if m.assignor != "" {
			votes[m.assignor]++
		}
	}
	sort.Strings(in.members)
	cg.assignor = chooseAssignor(defaultAssignor, votes)
	cg.target = assign(cg.assignor, in)
	cg.assignmentEpoch = cg.epoch
	cg.allDirty = true
}

// chooseAssignor is the assignor most members ask for, the default when
// none does.
func (cg *consumerGroup) chooseAssignor(defaultAssignor string) string {
	votes := map[string]int{}
	for _, m := range cg.members {
		if m.assignor != "" {
			votes[m.assignor]++
		}
	}
	return chooseAssignor(defaultAssignor, votes)
}

func chooseAssignor(defaultAssignor string, votes map[string]int) string {
	name := defaultAssignor
	for a, n := range votes {
		if n > votes[name] || (n == votes[name] && a < name) {
			name = a
		}
	}
	return name
}

// ownedByOthers says whether another member still owns or is revoking tp.
func (cg *consumerGroup) ownedByOthers(self *consumerMember, tp topicPart) bool {
	for _, o := range cg.members {
		if o != self && (o.assigned[tp] || o.revoking[tp]) {
			return true
		}
	}
	return false
}
