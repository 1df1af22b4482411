package group

import (
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/google/uuid"
)

// Member epochs with a meaning in ConsumerGroupHeartbeat.
const (
	epochJoin        = 0
	epochLeave       = -1
	epochStaticLeave = -2
)

// TopicPartitions are partitions of one topic, by topic id.
type TopicPartitions struct {
	TopicID    [16]byte
	Partitions []int32
}

// ConsumerHeartbeatRequest is a ConsumerGroupHeartbeat (KIP-848). Nil
// fields are unchanged since the member's last heartbeat.
type ConsumerHeartbeatRequest struct {
	Group            string
	MemberID         string
	MemberEpoch      int32
	InstanceID       *string
	RackID           *string
	RebalanceTimeout time.Duration // negative: unchanged
	SubscribedTopics []string
	SubscribedRegex  *string
	ServerAssignor   *string
	Owned            []TopicPartitions
	ClientID         string
	ClientHost       string
	// ClientMemberID is v1+: the client chose its member id.
	ClientMemberID bool
}

// ConsumerHeartbeatResponse is the answer; Assignment is nil when the
// member's assignment did not change.
type ConsumerHeartbeatResponse struct {
	Err               error
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	Assignment        []TopicPartitions
}

// ErrInvalidRegularExpression is a subscription pattern that does not compile.
var ErrInvalidRegularExpression = fmt.Errorf("group: invalid regular expression")

func (c *Coordinator) validateConsumerHeartbeat(req *ConsumerHeartbeatRequest) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidRequest}, args...)...)
	}
	switch {
	case req.Group == "":
		return bad("GroupId can't be empty")
	case req.ClientMemberID && req.MemberID == "":
		return bad("MemberId can't be empty")
	case req.MemberEpoch < epochStaticLeave:
		return bad("MemberEpoch %d is invalid", req.MemberEpoch)
	case req.InstanceID != nil && *req.InstanceID == "":
		return bad("InstanceId can't be empty")
	case req.RackID != nil && *req.RackID == "":
		return bad("RackId can't be empty")
	}
	if req.MemberEpoch == epochJoin {
		switch {
		case req.RebalanceTimeout < 0:
			return bad("RebalanceTimeoutMs must be provided in the first request")
		case req.Owned == nil || len(req.Owned) > 0:
			return bad("TopicPartitions must be empty when (re-)joining")
		case req.SubscribedTopics == nil && req.SubscribedRegex == nil:
			return bad("SubscribedTopicNames or SubscribedTopicRegex must be set in the first request")
		}
	}
	if req.SubscribedRegex != nil {
		if _, err := regexp.Compile(*req.SubscribedRegex); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidRegularExpression, err)
		}
	}
	if req.ServerAssignor != nil && !contains(c.cfg.ConsumerAssignors, *req.ServerAssignor) {
		return fmt.Errorf("%w: %q (this broker has %v)", ErrUnsupportedAssignor, *req.ServerAssignor, c.cfg.ConsumerAssignors)
	}
	return nil
}

// ConsumerHeartbeat handles a ConsumerGroupHeartbeat: it joins, updates or
// removes the member, recomputes the target assignment when the group
// changed, and moves the member towards it: partitions to give up first,
// then the new epoch with the partitions no one else still owns.
func (c *Coordinator) ConsumerHeartbeat(req ConsumerHeartbeatRequest) ConsumerHeartbeatResponse {
	resp := ConsumerHeartbeatResponse{MemberID: req.MemberID, MemberEpoch: req.MemberEpoch,
		HeartbeatInterval: c.cfg.ConsumerHeartbeatInterval}
	fail := func(err error) ConsumerHeartbeatResponse {
		resp.Err = err
		return resp
	}
	if err := c.validateConsumerHeartbeat(&req); err != nil {
		return fail(err)
	}
	s, err := c.lockShard(req.Group)
	if err != nil {
		return fail(err)
	}
	defer s.mu.Unlock()
	g := s.group(req.Group)
	if req.MemberEpoch == epochLeave || req.MemberEpoch == epochStaticLeave {
		return s.consumerLeave(g, req, resp)
	}
	if g == nil {
		if req.MemberEpoch != epochJoin {
			return fail(ErrUnknownMemberID)
		}
		g = newGroup(s, req.Group)
		s.groups[req.Group] = g
	}
	if g.streams != nil {
		if !g.empty() {
			return fail(fmt.Errorf("%w: group %q is a streams group with members", ErrGroupIDNotFound, g.id))
		}
		if err := s.write(g.memberTombstones()); err != nil {
			return fail(err)
		}
		g.streams.shutdown()
		g.streams = nil
		g.consumer = newConsumerGroup(g, s.now())
	}
	if g.classic != nil {
		if !g.empty() {
			return fail(fmt.Errorf("%w: group %q is a classic group with members", ErrGroupIDNotFound, g.id))
		}
		g.classic.shutdown()
		g.classic = nil
		g.consumer = newConsumerGroup(g, s.now())
		g.consumer.tombstoneClassic = true
	}
	if g.consumer == nil {
		g.consumer = newConsumerGroup(g, s.now())
	}
	cg := g.consumer
	m, bump, err := s.consumerMember(cg, &req)
	if err != nil {
		if len(cg.members) == 0 && len(g.offsets) == 0 {
			delete(s.groups, g.id)
		}
		return fail(err)
	}
	resp.MemberID = m.id
	m.clientID, m.clientHost = req.ClientID, req.ClientHost
	if req.RackID != nil {
		m.rackID = req.RackID
	}
	if req.RebalanceTimeout >= 0 {
		m.rebalanceTimeout = req.RebalanceTimeout
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != m.assignor {
		m.assignor, bump = *req.ServerAssignor, true
	}
	if req.SubscribedTopics != nil {
		topics := append([]string(nil), req.SubscribedTopics...)
		sort.Strings(topics)
		topics = dedup(topics)
		if !equalStrings(topics, m.topics) {
			m.topics, bump = topics, true
		}
	}
	if req.SubscribedRegex != nil && (m.regex == nil || *m.regex != *req.SubscribedRegex) {
		re := *req.SubscribedRegex
		m.regex, bump = &re, true
	}
	topics := c.topics()
	if h := cg.metadataHash(topics); h != cg.metaHash {
		cg.metaHash, bump = h, true
	}
	if bump {
		cg.epoch++
	}
	if cg.assignmentEpoch < cg.epoch {
		cg.computeTarget(c.cfg.ConsumerAssignors[0], topics)
	}
	var owned partSet
	if req.Owned != nil {
		owned = ownedSet(req.Owned, topics)
	}
	s.reconcile(g, m, owned)
	s.schedule(&m.session, c.cfg.ConsumerSessionTimeout, func() { s.fenceConsumerMember(g, m, "session timeout") })
	resp.MemberEpoch = m.epoch
	// The assignment goes out when it changed, and whenever the member's
	// own view differs from it.
	if m.lastSent == nil || !m.lastSent.equal(m.assigned) || (owned != nil && !owned.equal(m.assigned)) ||
		req.MemberEpoch == epochJoin {
		resp.Assignment = toTopicPartitions(m.assigned, topics)
		m.lastSent = clonePartSet(m.assigned)
	}
	if err := s.persistConsumer(g, m); err != nil {
		// The member retries; the records not written are written with
		// the next change.
		m.lastSent = nil
		return fail(err)
	}
	return resp
}

// consumerMember finds or creates the member a heartbeat is about, and
// says whether the group epoch must advance.
func (s *shard) consumerMember(cg *consumerGroup, req *ConsumerHeartbeatRequest) (*consumerMember, bool, error) {
	if req.MemberEpoch != epochJoin {
		m := cg.members[req.MemberID]
		if m == nil || m.departed {
			return nil, false, ErrUnknownMemberID
		}
		if req.MemberEpoch != m.epoch {
			owned := ownedSet(req.Owned, s.c.topics())
			if req.MemberEpoch != m.previousEpoch || req.Owned == nil || !owned.equal(m.assigned) {
				return nil, false, fmt.Errorf("%w: %d, the member is at epoch %d", ErrFencedMemberEpoch, req.MemberEpoch, m.epoch)
			}
		}
		return m, false, nil
	}
	id := req.MemberID
	if !req.ClientMemberID && id == "" {
		id = uuid.NewString()
	}
	if req.InstanceID != nil {
		if prev, ok := cg.instances[*req.InstanceID]; ok && prev != id {
			old := cg.members[prev]
			if old != nil && !old.departed {
				return nil, false, fmt.Errorf("%w: %q is used by member %s", ErrUnreleasedInstanceID, *req.InstanceID, prev)
			}
			if old != nil {
				// A static member comes back: it takes over the departed
				// member's assignment and epoch, without a rebalance.
				old.session.stop()
				old.revocation.stop()
				delete(cg.members, prev)
				m := &consumerMember{id: id, instanceID: old.instanceID, epoch: old.epoch, previousEpoch: old.previousEpoch,
					state: old.state, rebalanceTimeout: old.rebalanceTimeout, topics: old.topics, regex: old.regex,
					assignor: old.assignor, assigned: old.assigned, revoking: old.revoking}
				cg.members[id] = m
				cg.instances[*req.InstanceID] = id
				cg.allDirty = true
				if t, ok := cg.target[prev]; ok {
					delete(cg.target, prev)
					cg.target[id] = t
				}
				return m, false, nil
			}
		}
	}
	if m := cg.members[id]; m != nil {
		// Joining again with a known id: the member lost its partitions.
		m.departed = false
		m.assigned, m.revoking, m.lastSent = partSet{}, partSet{}, nil
		m.state = memberStable
		m.revocation.stop()
		return m, true, nil
	}
	m := &consumerMember{id: id, instanceID: req.InstanceID, assigned: partSet{}, revoking: partSet{}}
	cg.members[id] = m
	if req.InstanceID != nil {
		cg.instances[*req.InstanceID] = id
	}
	return m, true, nil
}

// reconcile moves a member towards its target assignment. owned is what the
// member reported owning (nil when it did not say).
func (s *shard) reconcile(g *group, m *consumerMember, owned partSet) {
	cg := g.consumer
	if m.state == memberUnrevoked {
		if owned == nil {
			return
		}
		for tp := range m.revoking {
			if owned[tp] {
				return
			}
		}
		m.revoking = partSet{}
		m.state = memberStable
		m.revocation.stop()
	}
	target := setOf(cg.target[m.id])
	if m.epoch == cg.assignmentEpoch && m.state == memberStable && m.assigned.equal(target) {
		return
	}
	keep, revoke := partSet{}, partSet{}
	for tp := range m.assigned {
		if target[tp] {
			keep[tp] = true
		} else {
			revoke[tp] = true
		}
	}
	if len(revoke) > 0 {
		m.assigned, m.revoking, m.state = keep, revoke, memberUnrevoked
		s.schedule(&m.revocation, max(m.rebalanceTimeout, time.Second), func() {
			s.fenceConsumerMember(g, m, "partitions not revoked within the rebalance timeout")
		})
		return
	}
	missing := 0
	for tp := range target {
		if keep[tp] {
			continue
		}
		if cg.ownedByOthers(m, tp) {
			missing++
			continue
		}
		keep[tp] = true
	}
	m.assigned = keep
	if m.epoch != cg.assignmentEpoch {
		m.previousEpoch, m.epoch = m.epoch, cg.assignmentEpoch
	}
	m.state = memberStable
	if missing > 0 {
		m.state = memberUnreleased
	}
}

// consumerLeave handles a heartbeat with epoch -1 (leave) or -2 (a static
// member leaving for a moment: it keeps its assignment until its session
// ends).
func (s *shard) consumerLeave(g *group, req ConsumerHeartbeatRequest, resp ConsumerHeartbeatResponse) ConsumerHeartbeatResponse {
	if g == nil || g.consumer == nil {
		resp.Err = ErrUnknownMemberID
		return resp
	}
	cg := g.consumer
	m := cg.members[req.MemberID]
	if m == nil && req.InstanceID != nil {
		m = cg.members[cg.instances[*req.InstanceID]]
	}
	if m == nil {
		resp.Err = ErrUnknownMemberID
		return resp
	}
	if req.MemberEpoch == epochStaticLeave && m.instanceID != nil {
		m.departed = true
		s.schedule(&m.session, s.c.cfg.ConsumerSessionTimeout, func() { s.fenceConsumerMember(g, m, "static member did not return") })
		resp.Err = s.persistConsumer(g, m)
		return resp
	}
	s.removeConsumerMember(g, m)
	resp.Err = s.persistConsumer(g, nil)
	return resp
}

// fenceConsumerMember removes a member that stopped heartbeating or did not
// revoke in time.
func (s *shard) fenceConsumerMember(g *group, m *consumerMember, why string) {
	if g.consumer == nil || g.consumer.members[m.id] != m {
		return
	}
	s.c.log.Info("removing consumer group member", "group", g.id, "member", m.id, "reason", why)
	s.removeConsumerMember(g, m)
	if err := s.persistConsumer(g, nil); err != nil {
		s.c.log.Warn("cannot store the removal of a consumer group member", "group", g.id, "member", m.id, "err", err)
	}
}

func (s *shard) removeConsumerMember(g *group, m *consumerMember) {
	cg := g.consumer
	m.session.stop()
	m.revocation.stop()
	delete(cg.members, m.id)
	if m.instanceID != nil && cg.instances[*m.instanceID] == m.id {
		delete(cg.instances, *m.instanceID)
	}
	cg.epoch++
	cg.allDirty = true
	if len(cg.members) == 0 {
		cg.stateTime = s.now()
		cg.target = assignment{}
		cg.assignmentEpoch = cg.epoch
	}
}

func ownedSet(owned []TopicPartitions, topics map[string]TopicInfo) partSet {
	names := make(map[[16]byte]string, len(topics))
	for n, t := range topics {
		names[t.ID] = n
	}
	s := partSet{}
	for _, tp := range owned {
		n, ok := names[tp.TopicID]
		if !ok {
			continue
		}
		for _, p := range tp.Partitions {
			s[topicPart{n, p}] = true
		}
	}
	return s
}

func toTopicPartitions(s partSet, topics map[string]TopicInfo) []TopicPartitions {
	byTopic := s.sorted()
	names := make([]string, 0, len(byTopic))
	for t := range byTopic {
		names = append(names, t)
	}
	sort.Strings(names)
	out := make([]TopicPartitions, 0, len(names))
	for _, t := range names {
		ti, ok := topics[t]
		if !ok {
			continue
		}
		out = append(out, TopicPartitions{TopicID: ti.ID, Partitions: byTopic[t]})
	}
	return out
}

func clonePartSet(s partSet) partSet {
	out := make(partSet, len(s))
	for tp := range s {
		out[tp] = true
	}
	return out
}

func dedup(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
