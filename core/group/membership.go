package group

import "fmt"

// SyncRequest is a classic SyncGroup.
type SyncRequest struct {
	Group      string
	MemberID   string
	InstanceID *string
	Generation int32
	// ProtocolType and Protocol are checked when set (SyncGroup v5+).
	ProtocolType *string
	Protocol     *string
	// Assignments is the leader's assignment per member id.
	Assignments map[string][]byte
}

// SyncResponse is the answer to a SyncGroup.
type SyncResponse struct {
	Err          error
	ProtocolType string
	Protocol     string
	Assignment   []byte
}

// SyncGroup handles a classic SyncGroup. It answers now, or returns a
// channel that receives the answer once the leader's assignment is stored.
func (c *Coordinator) SyncGroup(req SyncRequest) (SyncResponse, <-chan SyncResponse) {
	fail := func(err error) (SyncResponse, <-chan SyncResponse) { return SyncResponse{Err: err}, nil }
	if req.Group == "" {
		return fail(ErrInvalidGroupID)
	}
	s, err := c.lockShard(req.Group)
	if err != nil {
		return fail(err)
	}
	defer s.mu.Unlock()
	g := s.group(req.Group)
	if g == nil || g.classic == nil {
		return fail(ErrUnknownMemberID)
	}
	cg := g.classic
	m, err := cg.validateMember(req.MemberID, req.InstanceID)
	if err != nil {
		return fail(err)
	}
	switch {
	case req.Generation != cg.generation:
		return fail(fmt.Errorf("%w: %d, the group is at generation %d", ErrIllegalGeneration, req.Generation, cg.generation))
	case req.ProtocolType != nil && *req.ProtocolType != cg.protocolType:
		return fail(ErrInconsistentGroupProtocol)
	case req.Protocol != nil && *req.Protocol != cg.protocol:
		return fail(ErrInconsistentGroupProtocol)
	}
	switch cg.state {
	case StatePreparingRebalance:
		return fail(ErrRebalanceInProgress)
	case StateStable:
		delete(cg.pendingSync, m.id)
		s.scheduleSession(g, m, m.sessionTimeout)
		return SyncResponse{ProtocolType: cg.protocolType, Protocol: cg.protocol, Assignment: m.assignment}, nil
	case StateCompletingRebalance:
	default:
		return fail(ErrUnknownMemberID)
	}
	delete(cg.pendingSync, m.id)
	s.scheduleSession(g, m, m.sessionTimeout)
	m.answerSync(SyncResponse{Err: ErrRebalanceInProgress})
	ch := make(chan SyncResponse, 1)
	m.syncCh = ch
	if m.id != cg.leader {
		return SyncResponse{}, ch
	}
	assignments := make(map[string][]byte, len(cg.members))
	for id := range cg.members {
		a := req.Assignments[id]
		if a == nil {
			a = []byte{}
		}
		assignments[id] = a
	}
	if err := s.store(g, assignments); err != nil {
		s.c.log.Warn("cannot store group assignment", "group", g.id, "err", err)
		for _, o := range cg.members {
			o.assignment = nil
			o.answerSync(SyncResponse{Err: err})
		}
		s.maybePrepareRebalance(g)
		return SyncResponse{}, ch
	}
	for id, o := range cg.members {
		o.assignment = assignments[id]
		o.answerSync(SyncResponse{ProtocolType: cg.protocolType, Protocol: cg.protocol, Assignment: o.assignment})
	}
	cg.transition(s, StateStable)
	return SyncResponse{}, ch
}

// validateMember finds a member, fencing a static member's old id.
func (cg *classicGroup) validateMember(memberID string, instanceID *string) (*member, error) {
	if instanceID != nil {
		if id, ok := cg.instances[*instanceID]; ok && id != memberID {
			return nil, ErrFencedInstanceID
		}
	}
	m := cg.members[memberID]
	if m == nil {
		return nil, ErrUnknownMemberID
	}
	return m, nil
}

// HeartbeatRequest is a classic Heartbeat.
type HeartbeatRequest struct {
	Group      string
	MemberID   string
	InstanceID *string
	Generation int32
}

// Heartbeat keeps a classic member's session alive. While the group
// rebalances it answers ErrRebalanceInProgress, telling the member to join
// again.
func (c *Coordinator) Heartbeat(req HeartbeatRequest) error {
	if req.Group == "" {
		return ErrInvalidGroupID
	}
	s, err := c.lockShard(req.Group)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	g := s.group(req.Group)
	if g == nil || g.classic == nil || g.classic.state == StateEmpty {
		return ErrUnknownMemberID
	}
	cg := g.classic
	m, err := cg.validateMember(req.MemberID, req.InstanceID)
	if err != nil {
		return err
	}
	if req.Generation != cg.generation {
		return fmt.Errorf("%w: %d, the group is at generation %d", ErrIllegalGeneration, req.Generation, cg.generation)
	}
	s.scheduleSession(g, m, m.sessionTimeout)
	if cg.state == StatePreparingRebalance {
		return ErrRebalanceInProgress
	}
	return nil
}

// LeavingMember is one member of a LeaveGroup.
type LeavingMember struct {
	MemberID   string
	InstanceID *string
	Reason     string
}

// LeaveGroup removes members from a classic group. It returns one error (or
// nil) per member, and an error for the whole request.
func (c *Coordinator) LeaveGroup(groupID string, members []LeavingMember) ([]error, error) {
	if groupID == "" {
		return nil, ErrInvalidGroupID
	}
	s, err := c.lockShard(groupID)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	errs := make([]error, len(members))
	g := s.group(groupID)
	if g == nil || g.classic == nil {
		for i := range errs {
			errs[i] = ErrUnknownMemberID
		}
		return errs, nil
	}
	cg := g.classic
	for i, lm := range members {
		if lm.InstanceID != nil {
			id, ok := cg.instances[*lm.InstanceID]
			switch {
			case !ok:
				errs[i] = ErrUnknownMemberID
			case lm.MemberID != "" && lm.MemberID != id:
				errs[i] = ErrFencedInstanceID
			default:
				s.c.log.Info("static member left", "group", groupID, "member", id, "reason", lm.Reason)
				s.removeMember(g, cg.members[id])
			}
			continue
		}
		if d, ok := cg.pending[lm.MemberID]; ok {
			d.stop()
			delete(cg.pending, lm.MemberID)
			if cg.state == StatePreparingRebalance {
				s.tryCompleteJoin(g)
			}
			continue
		}
		m := cg.members[lm.MemberID]
		if m == nil {
			errs[i] = ErrUnknownMemberID
			continue
		}
		s.c.log.Info("member left", "group", groupID, "member", m.id, "reason", lm.Reason)
		s.removeMember(g, m)
	}
	return errs, nil
}
