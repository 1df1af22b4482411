package group

import (
	"fmt"
	"time"
)

// JoinRequest is a classic JoinGroup.
type JoinRequest struct {
	Group            string
	MemberID         string
	InstanceID       *string
	ProtocolType     string
	Protocols        []Protocol
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	ClientID         string
	ClientHost       string
	Reason           string
	// RequireKnownMemberID is JoinGroup v4+: a new member first gets an id
	// with MEMBER_ID_REQUIRED and must join again with it.
	RequireKnownMemberID bool
	// SupportsSkipAssignment is JoinGroup v9+ (KIP-814).
	SupportsSkipAssignment bool
}

// JoinMember is a member as the leader sees it in its JoinGroup answer.
type JoinMember struct {
	MemberID   string
	InstanceID *string
	Metadata   []byte
}

// JoinResponse is the answer to a JoinGroup.
type JoinResponse struct {
	Err            error
	Generation     int32
	ProtocolType   string
	Protocol       string
	Leader         string
	SkipAssignment bool
	MemberID       string
	Members        []JoinMember
}

// JoinGroup handles a classic JoinGroup. It answers now, or returns a
// channel that receives the answer when the rebalance completes.
func (c *Coordinator) JoinGroup(req JoinRequest) (JoinResponse, <-chan JoinResponse) {
	fail := func(err error) (JoinResponse, <-chan JoinResponse) {
		return JoinResponse{Err: err, MemberID: req.MemberID, Generation: -1}, nil
	}
	if req.Group == "" {
		return fail(ErrInvalidGroupID)
	}
	if req.SessionTimeout < c.cfg.MinSessionTimeout || req.SessionTimeout > c.cfg.MaxSessionTimeout {
		return fail(fmt.Errorf("%w: %v is not within [%v, %v]", ErrInvalidSessionTimeout,
			req.SessionTimeout, c.cfg.MinSessionTimeout, c.cfg.MaxSessionTimeout))
	}
	if req.RebalanceTimeout <= 0 {
		req.RebalanceTimeout = req.SessionTimeout
	}
	s, err := c.lockShard(req.Group)
	if err != nil {
		return fail(err)
	}
	defer s.mu.Unlock()
	g := s.group(req.Group)
	if g == nil {
		if req.MemberID != "" {
			return fail(ErrUnknownMemberID)
		}
		g = s.newClassicGroup(req.Group)
		// A refused first join leaves no group behind.
		defer func() {
			if g.classic != nil && g.empty() && len(g.offsets) == 0 && g.classic.state == StateEmpty && s.groups[g.id] == g {
				delete(s.groups, g.id)
			}
		}()
	}
	if g.streams != nil {
		if !g.empty() {
			return fail(fmt.Errorf("%w: group %q is a streams group", ErrInconsistentGroupProtocol, g.id))
		}
		// The streams group's records go before it becomes classic.
		if err := s.write(g.memberTombstones()); err != nil {
			return fail(err)
		}
		g.streams.shutdown()
		g.streams = nil
		g.classic = newClassic(g, s.now())
	}
	if g.consumer != nil {
		if !g.empty() {
			return fail(fmt.Errorf("%w: group %q is a consumer group", ErrInconsistentGroupProtocol, g.id))
		}
		// The consumer group's records go before it becomes classic.
		if err := s.write(g.memberTombstones()); err != nil {
			return fail(err)
		}
		g.consumer.shutdown()
		g.consumer, g.classic = nil, newClassic(g, s.now())
	}
	cg := g.classic
	_, known := cg.members[req.MemberID]
	_, pending := cg.pending[req.MemberID]
	if !known && !pending && len(cg.members)+len(cg.pending) >= c.cfg.MaxGroupSize {
		return fail(ErrGroupMaxSizeReached)
	}
	var resp JoinResponse
	var wait <-chan JoinResponse
	if req.MemberID == "" {
		resp, wait = s.joinNewMember(g, req)
	} else {
		resp, wait = s.joinKnownMember(g, req)
	}
	if cg.state == StatePreparingRebalance {
		s.tryCompleteJoin(g)
	}
	return resp, wait
}

func (s *shard) joinNewMember(g *group, req JoinRequest) (JoinResponse, <-chan JoinResponse) {
	cg := g.classic
	if !cg.supports(req.ProtocolType, req.Protocols) {
		return JoinResponse{Err: ErrInconsistentGroupProtocol, Generation: -1}, nil
	}
	if req.InstanceID != nil {
		newID := newMemberID(*req.InstanceID)
		if oldID, ok := cg.instances[*req.InstanceID]; ok {
			return s.rejoinStatic(g, req, oldID, newID)
		}
		return s.addMember(g, req, newID)
	}
	newID := newMemberID(req.ClientID)
	if req.RequireKnownMemberID {
		d := &deadline{}
		cg.pending[newID] = d
		s.schedule(d, req.SessionTimeout, func() {
			delete(cg.pending, newID)
			if cg.state == StatePreparingRebalance {
				s.tryCompleteJoin(g)
			}
		})
		return JoinResponse{Err: ErrMemberIDRequired, MemberID: newID, Generation: -1}, nil
	}
	return s.addMember(g, req, newID)
}

func (s *shard) joinKnownMember(g *group, req JoinRequest) (JoinResponse, <-chan JoinResponse) {
	cg := g.classic
	fail := func(err error) (JoinResponse, <-chan JoinResponse) {
		return JoinResponse{Err: err, MemberID: req.MemberID, Generation: -1}, nil
	}
	if !cg.supports(req.ProtocolType, req.Protocols) {
		return fail(ErrInconsistentGroupProtocol)
	}
	if d, ok := cg.pending[req.MemberID]; ok {
		d.stop()
		delete(cg.pending, req.MemberID)
		return s.addMember(g, req, req.MemberID)
	}
	if req.InstanceID != nil {
		if id, ok := cg.instances[*req.InstanceID]; ok && id != req.MemberID {
			return fail(ErrFencedInstanceID)
		}
	}
	m := cg.members[req.MemberID]
	if m == nil {
		return fail(ErrUnknownMemberID)
	}
	switch cg.state {
	case StatePreparingRebalance:
		return s.updateMember(g, m, req)
	case StateCompletingRebalance:
		if m.matches(req.Protocols) {
			// The member lost its JoinGroup answer: give it again.
			return cg.joinAnswer(m.id, m.id == cg.leader), nil
		}
		return s.updateMember(g, m, req)
	case StateStable:
		if m.id == cg.leader || !m.matches(req.Protocols) {
			return s.updateMember(g, m, req)
		}
		s.scheduleSession(g, m, m.sessionTimeout)
		return cg.joinAnswer(m.id, false), nil
	}
	return fail(ErrUnknownMemberID)
}

// joinAnswer is the current generation as a JoinGroup answer; the leader's
// lists every member with its metadata for the chosen protocol.
func (cg *classicGroup) joinAnswer(memberID string, withMembers bool) JoinResponse {
	r := JoinResponse{MemberID: memberID, Generation: cg.generation, ProtocolType: cg.protocolType,
		Protocol: cg.protocol, Leader: cg.leader}
	if withMembers {
		r.Members = make([]JoinMember, 0, len(cg.order))
		for _, id := range cg.order {
			m := cg.members[id]
			r.Members = append(r.Members, JoinMember{MemberID: id, InstanceID: m.instanceID, Metadata: m.metadata(cg.protocol)})
		}
	}
	return r
}

func newMember(req JoinRequest, id string) *member {
	m := &member{id: id, clientID: req.ClientID, clientHost: req.ClientHost, sessionTimeout: req.SessionTimeout,
		rebalanceTimeout: req.RebalanceTimeout, protocolType: req.ProtocolType, protocols: req.Protocols, isNew: true}
	if req.InstanceID != nil {
		inst := *req.InstanceID
		m.instanceID = &inst
	}
	return m
}

func (s *shard) addMember(g *group, req JoinRequest, id string) (JoinResponse, <-chan JoinResponse) {
	cg := g.classic
	m := newMember(req, id)
	ch := make(chan JoinResponse, 1)
	m.joinCh = ch
	if cg.state == StatePreparingRebalance && cg.generation == 0 {
		cg.newMemberAdded = true
	}
	cg.add(m)
	s.scheduleSession(g, m, newMemberJoinTimeout)
	s.maybePrepareRebalance(g)
	return JoinResponse{}, ch
}

func (s *shard) updateMember(g *group, m *member, req JoinRequest) (JoinResponse, <-chan JoinResponse) {
	m.protocols, m.sessionTimeout, m.rebalanceTimeout = req.Protocols, req.SessionTimeout, req.RebalanceTimeout
	m.clientID, m.clientHost = req.ClientID, req.ClientHost
	m.answerJoin(JoinResponse{Err: ErrRebalanceInProgress, MemberID: m.id, Generation: -1})
	ch := make(chan JoinResponse, 1)
	m.joinCh = ch
	s.maybePrepareRebalance(g)
	return JoinResponse{}, ch
}

// rejoinStatic handles a static member joining again with an unknown member
// id (KIP-345): it takes a new id, fencing the old one, and the group
// rebalances only if its chosen protocol would change.
func (s *shard) rejoinStatic(g *group, req JoinRequest, oldID, newID string) (JoinResponse, <-chan JoinResponse) {
	cg := g.classic
	m := cg.members[oldID]
	previousLeader := cg.leader
	oldProtocols, oldSession, oldRebalance := m.protocols, m.sessionTimeout, m.rebalanceTimeout
	cg.replaceID(m, newID)
	m.protocols, m.sessionTimeout, m.rebalanceTimeout = req.Protocols, req.SessionTimeout, req.RebalanceTimeout
	s.scheduleSession(g, m, m.sessionTimeout)
	switch cg.state {
	case StateStable:
		if cg.selectProtocol() == cg.protocol {
			if err := s.store(g, nil); err != nil {
				cg.replaceID(m, oldID)
				m.protocols, m.sessionTimeout, m.rebalanceTimeout = oldProtocols, oldSession, oldRebalance
				return JoinResponse{Err: err, MemberID: req.MemberID, Generation: -1}, nil
			}
			isLeader := cg.leader == newID
			if req.SupportsSkipAssignment {
				r := cg.joinAnswer(newID, isLeader)
				r.SkipAssignment = isLeader
				return r, nil
			}
			// Older clients are told the previous leader id, so that a
			// leader does not compute an assignment a stable group ignores.
			r := cg.joinAnswer(newID, false)
			r.Leader = previousLeader
			return r, nil
		}
		ch := make(chan JoinResponse, 1)
		m.joinCh = ch
		s.maybePrepareRebalance(g)
		return JoinResponse{}, ch
	case StateCompletingRebalance:
		ch := make(chan JoinResponse, 1)
		m.joinCh = ch
		s.prepareRebalance(g)
		return JoinResponse{}, ch
	default: // PreparingRebalance
		ch := make(chan JoinResponse, 1)
		m.joinCh = ch
		return JoinResponse{}, ch
	}
}

// scheduleSession (re)starts a member's session timer.
func (s *shard) scheduleSession(g *group, m *member, d time.Duration) {
	s.schedule(&m.session, d, func() { s.sessionExpired(g, m) })
}

// sessionExpired removes a member whose session ran out; a member that is
// waiting in JoinGroup or SyncGroup cannot heartbeat, so it is kept unless
// it is new.
func (s *shard) sessionExpired(g *group, m *member) {
	cg := g.classic
	if cg == nil || cg.members[m.id] != m {
		return
	}
	if !m.isNew && (m.joinCh != nil || m.syncCh != nil) {
		s.scheduleSession(g, m, m.sessionTimeout)
		return
	}
	s.c.log.Info("member session expired", "group", g.id, "member", m.id)
	s.removeMember(g, m)
}

// removeMember removes a member and moves the group on: a rebalance when it
// was settled, or the completion of a rebalance that waited for it.
func (s *shard) removeMember(g *group, m *member) {
	cg := g.classic
	cg.remove(m)
	switch cg.state {
	case StateStable, StateCompletingRebalance:
		s.maybePrepareRebalance(g)
	case StatePreparingRebalance:
		s.tryCompleteJoin(g)
	}
}

func (s *shard) maybePrepareRebalance(g *group) {
	switch g.classic.state {
	case StateStable, StateCompletingRebalance, StateEmpty:
		s.prepareRebalance(g)
	}
}

// prepareRebalance starts a rebalance: members waiting for their assignment
// are told REBALANCE_IN_PROGRESS, and the group waits for every member to
// join again, at most the longest rebalance timeout; an empty group's first
// rebalance waits the initial delay instead.
func (s *shard) prepareRebalance(g *group) {
	cg := g.classic
	if cg.state == StateCompletingRebalance {
		for _, m := range cg.members {
			m.assignment = nil
			m.answerSync(SyncResponse{Err: ErrRebalanceInProgress})
		}
	}
	cg.sync.stop()
	cg.pendingSync = map[string]bool{}
	wasEmpty := cg.state == StateEmpty
	cg.transition(s, StatePreparingRebalance)
	if wasEmpty {
		delay := s.c.cfg.InitialRebalanceDelay
		s.initialJoin(g, delay, max(cg.rebalanceTimeout()-delay, 0))
		return
	}
	cg.initialJoin = false
	s.schedule(&cg.join, cg.rebalanceTimeout(), func() { s.completeJoin(g) })
	s.tryCompleteJoin(g)
}

// initialJoin waits delay, then again while new members keep arriving, for
// at most remaining more.
func (s *shard) initialJoin(g *group, delay, remaining time.Duration) {
	cg := g.classic
	cg.initialJoin = true
	expire := func() {
		if cg.newMemberAdded && remaining > 0 {
			cg.newMemberAdded = false
			next := min(s.c.cfg.InitialRebalanceDelay, remaining)
			s.initialJoin(g, next, max(remaining-next, 0))
			return
		}
		cg.initialJoin = false
		s.completeJoin(g)
	}
	if delay <= 0 {
		cg.join.stop()
		expire()
		return
	}
	s.schedule(&cg.join, delay, expire)
}

// tryCompleteJoin completes the rebalance once every member has joined.
func (s *shard) tryCompleteJoin(g *group) {
	cg := g.classic
	if cg.state == StatePreparingRebalance && !cg.initialJoin && cg.allJoined() {
		cg.join.stop()
		s.completeJoin(g)
	}
}

// completeJoin ends the join phase: members that did not join again are
// removed, the generation advances, a protocol is chosen and every member
// gets its answer, the leader with the member list.
func (s *shard) completeJoin(g *group) {
	cg := g.classic
	if cg.state != StatePreparingRebalance {
		return
	}
	cg.join.stop()
	cg.initialJoin, cg.newMemberAdded = false, false
	for _, id := range append([]string(nil), cg.order...) {
		if m := cg.members[id]; m.joinCh == nil {
			s.c.log.Info("removing member that did not rejoin", "group", g.id, "member", id)
			cg.remove(m)
		}
	}
	cg.generation++
	if len(cg.members) == 0 {
		cg.protocol, cg.leader = "", ""
		cg.transition(s, StateEmpty)
		if err := s.store(g, nil); err != nil {
			s.c.log.Warn("cannot store empty group", "group", g.id, "err", err)
		}
		return
	}
	cg.protocol = cg.selectProtocol()
	cg.transition(s, StateCompletingRebalance)
	for _, id := range cg.order {
		m := cg.members[id]
		m.answerJoin(cg.joinAnswer(id, id == cg.leader))
		m.isNew = false
		s.scheduleSession(g, m, m.sessionTimeout)
		cg.pendingSync[id] = true
	}
	gen := cg.generation
	s.schedule(&cg.sync, cg.rebalanceTimeout(), func() { s.syncExpired(g, gen) })
	s.c.log.Info("group rebalanced", "group", g.id, "generation", cg.generation, "protocol", cg.protocol,
		"members", len(cg.members), "leader", cg.leader)
}

// syncExpired removes the members that did not send SyncGroup within the
// rebalance timeout after the join completed.
func (s *shard) syncExpired(g *group, gen int32) {
	cg := g.classic
	if cg == nil || cg.generation != gen || (cg.state != StateCompletingRebalance && cg.state != StateStable) {
		return
	}
	if len(cg.pendingSync) == 0 {
		return
	}
	for id := range cg.pendingSync {
		if m := cg.members[id]; m != nil {
			s.c.log.Info("removing member that did not sync", "group", g.id, "member", id)
			cg.remove(m)
		}
	}
	cg.pendingSync = map[string]bool{}
	s.maybePrepareRebalance(g)
}
