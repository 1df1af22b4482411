package group

import (
	"fmt"
	"sort"
	"time"
)

// StreamsTaskIDs are tasks of one subtopology.
type StreamsTaskIDs struct {
	Subtopology string
	Partitions  []int32
}

// StreamsEndpoint is a member's endpoint for Interactive Queries.
type StreamsEndpoint struct {
	Host string
	Port uint16
}

// StreamsEndpointPartitions are the input partitions of the active and
// standby tasks of the members at one endpoint, by topic.
type StreamsEndpointPartitions struct {
	Endpoint StreamsEndpoint
	Active   map[string][]int32
	Standby  map[string][]int32
}

// StreamsHeartbeatRequest is a StreamsGroupHeartbeat (KIP-1071). Nil fields
// are unchanged since the member's last heartbeat.
type StreamsHeartbeatRequest struct {
	Group            string
	MemberID         string
	MemberEpoch      int32
	EndpointEpoch    int32
	InstanceID       *string
	RackID           *string
	RebalanceTimeout time.Duration // negative: unchanged
	Topology         *StreamsTopology
	Active           []StreamsTaskIDs
	Standby          []StreamsTaskIDs
	Warmup           []StreamsTaskIDs
	ProcessID        *string
	UserEndpoint     *StreamsEndpoint
	ClientTags       map[string]string
	Shutdown         bool
	ClientID         string
	ClientHost       string
}

// StreamsHeartbeatResponse is the answer. Task lists are nil when the
// member's assignment did not change; Create lists the internal topics the
// broker must create for the group's topology.
type StreamsHeartbeatResponse struct {
	Err                   error
	MemberID              string
	MemberEpoch           int32
	HeartbeatInterval     time.Duration
	AcceptableRecoveryLag int64
	TaskOffsetInterval    time.Duration
	Status                []StreamsStatus
	Active                []StreamsTaskIDs
	Standby               []StreamsTaskIDs
	Warmup                []StreamsTaskIDs
	EndpointEpoch         int32
	PartitionsByEndpoint  []StreamsEndpointPartitions
	Create                []StreamsTopicInfo
	// DescriptionRequired asks the member for the group's topology
	// description (StreamsGroupTopologyDescriptionUpdate, KIP-1331): the
	// coordinator has none for the group's topology epoch.
	DescriptionRequired bool
}

func validateStreamsHeartbeat(req *StreamsHeartbeatRequest) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidRequest}, args...)...)
	}
	switch {
	case req.Group == "":
		return bad("GroupId can't be empty.")
	case req.MemberID == "":
		return bad("MemberId can't be empty.")
	case req.MemberEpoch < epochStaticLeave:
		return bad("MemberEpoch is %d, but must be greater than or equal to -2.", req.MemberEpoch)
	case req.InstanceID != nil && *req.InstanceID == "":
		return bad("InstanceId can't be empty.")
	case req.RackID != nil && *req.RackID == "":
		return bad("RackId can't be empty.")
	}
	if req.MemberEpoch == epochJoin {
		switch {
		case req.RebalanceTimeout < 0:
			return bad("RebalanceTimeoutMs must be provided in first request.")
		case req.Topology == nil:
			return bad("Topology must be non-null when joining.")
		case req.ProcessID == nil || *req.ProcessID == "":
			return bad("ProcessId can't be empty.")
		case len(req.Active) > 0 || len(req.Standby) > 0 || len(req.Warmup) > 0:
			return bad("ActiveTasks, StandbyTasks and WarmupTasks must be empty when (re-)joining.")
		}
		if err := validateTopology(req.Topology); err != nil {
			return err
		}
	}
	return nil
}

// StreamsHeartbeat handles a StreamsGroupHeartbeat: it joins, updates or
// removes the member, sets the topology up against the topics that exist,
// recomputes the target assignment when the group changed, and moves the
// member towards it: tasks to give up first, then the new epoch with the
// active tasks no one else still owns.
func (c *Coordinator) StreamsHeartbeat(req StreamsHeartbeatRequest) StreamsHeartbeatResponse {
	settings := c.streamsSettings(req.Group)
	resp := StreamsHeartbeatResponse{MemberID: req.MemberID, MemberEpoch: req.MemberEpoch,
		HeartbeatInterval: settings.heartbeatInterval, AcceptableRecoveryLag: c.cfg.StreamsAcceptableRecoveryLag,
		TaskOffsetInterval: c.cfg.StreamsTaskOffsetInterval}
	fail := func(err error) StreamsHeartbeatResponse {
		resp.Err = err
		return resp
	}
	if err := validateStreamsHeartbeat(&req); err != nil {
		return fail(err)
	}
	s, err := c.lockShard(req.Group)
	if err != nil {
		return fail(err)
	}
	defer s.mu.Unlock()
	g := s.group(req.Group)
	if req.MemberEpoch == epochLeave || req.MemberEpoch == epochStaticLeave {
		return s.streamsLeave(g, req, resp, settings)
	}
	if g == nil {
		if req.MemberEpoch != epochJoin {
			return fail(ErrUnknownMemberID)
		}
		g = newGroup(s, req.Group)
		g.streams = newStreamsGroup(g, s.now())
		s.groups[req.Group] = g
	}
	if g.streams == nil {
		if !g.empty() {
			return fail(fmt.Errorf("%w: group %s is not a streams group", ErrGroupIDNotFound, g.id))
		}
		if g.consumer != nil {
			if err := s.write(g.memberTombstones()); err != nil {
				return fail(err)
			}
		} else if g.classic != nil && g.classic.protocolType != "" {
			if err := s.write([]kv{{key: encodeGroupKey(g.id)}}); err != nil {
				return fail(err)
			}
		}
		g.shutdown()
		g.classic, g.consumer = nil, nil
		g.streams = newStreamsGroup(g, s.now())
	}
	sg := g.streams
	m, bump, err := sg.member(&req, c.topics())
	if err != nil {
		if len(sg.members) == 0 && len(g.offsets) == 0 && len(sg.persisted) == 0 {
			delete(s.groups, g.id)
		}
		return fail(err)
	}
	resp.MemberID = m.id
	m.clientID, m.clientHost = req.ClientID, req.ClientHost
	if req.RebalanceTimeout >= 0 {
		m.rebalanceTimeout = req.RebalanceTimeout
	}
	if req.RackID != nil && (m.rackID == nil || *m.rackID != *req.RackID) {
		m.rackID, bump = req.RackID, true
	}
	if req.ProcessID != nil && *req.ProcessID != m.processID {
		m.processID, bump = *req.ProcessID, true
	}
	if req.ClientTags != nil {
		m.clientTags = req.ClientTags
	}
	if req.UserEndpoint != nil && (m.endpoint == nil || *m.endpoint != *req.UserEndpoint) {
		ep := *req.UserEndpoint
		m.endpoint = &ep
		sg.endpointEpoch++
	}
	if req.Topology != nil {
		m.topologyEpoch = req.Topology.Epoch
		switch {
		case sg.topology == nil || req.Topology.Epoch > sg.topology.Epoch:
			t := *req.Topology
			sg.topology, bump = &t, true
		case req.Topology.Epoch == sg.topology.Epoch && !sameTopology(req.Topology, sg.topology):
			if len(sg.members) == 1 {
				// The only member brings a changed topology under the same
				// epoch: Kafka takes it, there is no one to disagree.
				t := *req.Topology
				sg.topology, bump = &t, true
				break
			}
			s.removeStreamsMember(g, m)
			s.persistStreamsLogged(g, "member with a differing topology removed")
			return fail(fmt.Errorf("%w: topology epoch %d is the group's, but the topology differs", ErrStreamsInvalidTopologyEpoch, req.Topology.Epoch))
		}
	}
	if req.Shutdown {
		sg.shutdownRequest = true
	}
	topics := c.topics()
	if h := sg.metadataHash(topics); h != sg.metaHash {
		sg.metaHash, bump = h, true
	}
	if settings.standbyReplicas != sg.standbyReplicas && sg.assignmentEpoch > 0 {
		// streams.num.standby.replicas changed: a new target assignment.
		bump = true
	}
	if bump {
		sg.epoch++
	}
	if sg.assignmentEpoch < sg.epoch {
		sg.computeTarget(settings.standbyReplicas, topics)
	}
	var owned *streamsTasks
	if req.Active != nil || req.Standby != nil || req.Warmup != nil {
		o := streamsTasks{active: tasksFromIDs(req.Active), standby: tasksFromIDs(req.Standby), warmup: tasksFromIDs(req.Warmup)}
		owned = &o
	}
	s.reconcileStreams(g, m, owned)
	s.schedule(&m.session, settings.sessionTimeout, func() { s.fenceStreamsMember(g, m, "session timeout") })
	resp.MemberEpoch = m.epoch
	resp.Status = append(resp.Status, sg.configured.statuses...)
	resp.Create = sg.configured.create
	if sg.topology != nil && m.topologyEpoch < sg.topology.Epoch {
		resp.Status = append(resp.Status, StreamsStatus{StreamsStatusStaleTopology,
			fmt.Sprintf("The member's topology epoch %d is behind the group's topology epoch %d.", m.topologyEpoch, sg.topology.Epoch)})
	}
	if sg.shutdownRequest {
		resp.Status = append(resp.Status, StreamsStatus{StreamsStatusShutdownApplication,
			"A KafkaStreams instance encountered a fatal error and requested a shutdown for the entire application."})
	}
	if m.lastSent == nil || !m.lastSent.equal(m.assigned) || (owned != nil && !owned.equal(m.assigned)) || req.MemberEpoch == epochJoin {
		resp.Active, resp.Standby, resp.Warmup = taskIDs(m.assigned.active), taskIDs(m.assigned.standby), taskIDs(m.assigned.warmup)
		sent := m.assigned.clone()
		m.lastSent = &sent
	}
	resp.EndpointEpoch = sg.endpointEpoch
	resp.DescriptionRequired = sg.topology != nil && sg.describedTopology() == nil
	if req.EndpointEpoch != sg.endpointEpoch || m.needEndpoints {
		resp.PartitionsByEndpoint = sg.partitionsByEndpoint()
		m.needEndpoints = false
	}
	if err := s.persistStreams(g, m); err != nil {
		// The member retries; the records not written are written with
		// the next change.
		m.lastSent, m.needEndpoints = nil, true
		return fail(err)
	}
	return resp
}

// member finds or creates the member a heartbeat is about, and says whether
// the group epoch must advance.
func (sg *streamsGroup) member(req *StreamsHeartbeatRequest, topics map[string]TopicInfo) (*streamsMember, bool, error) {
	if req.MemberEpoch != epochJoin {
		m := sg.members[req.MemberID]
		if m == nil || m.departed {
			return nil, false, ErrUnknownMemberID
		}
		if req.MemberEpoch != m.epoch {
			owned := streamsTasks{active: tasksFromIDs(req.Active), standby: tasksFromIDs(req.Standby), warmup: tasksFromIDs(req.Warmup)}
			if req.MemberEpoch != m.previousEpoch || req.Active == nil || !owned.active.equal(m.assigned.active) {
				return nil, false, fmt.Errorf("%w: %d, the member is at epoch %d", ErrFencedMemberEpoch, req.MemberEpoch, m.epoch)
			}
		}
		return m, false, nil
	}
	id := req.MemberID
	if req.InstanceID != nil {
		if prev, ok := sg.instances[*req.InstanceID]; ok && prev != id {
			old := sg.members[prev]
			if old != nil && !old.departed {
				return nil, false, fmt.Errorf("%w: %q is used by member %s", ErrUnreleasedInstanceID, *req.InstanceID, prev)
			}
			if old != nil {
				// A static member comes back under a new member id: it takes
				// over the departed member's tasks and epoch, without a
				// rebalance.
				old.session.stop()
				old.revocation.stop()
				delete(sg.members, prev)
				m := *old
				m.id, m.departed, m.lastSent = id, false, nil
				m.session, m.revocation = deadline{}, deadline{}
				sg.members[id] = &m
				sg.instances[*req.InstanceID] = id
				sg.allDirty = true
				if t, ok := sg.target[prev]; ok {
					delete(sg.target, prev)
					sg.target[id] = t
				}
				return &m, false, nil
			}
		}
	}
	if m := sg.members[id]; m != nil {
		// Joining again with a known id: the member lost its tasks.
		m.departed = false
		m.assigned, m.revoking, m.lastSent = newStreamsTasks(), newStreamsTasks(), nil
		m.state = memberStable
		m.revocation.stop()
		return m, true, nil
	}
	m := &streamsMember{id: id, instanceID: req.InstanceID, assigned: newStreamsTasks(), revoking: newStreamsTasks()}
	sg.members[id] = m
	sg.allDirty = true
	if req.InstanceID != nil {
		sg.instances[*req.InstanceID] = id
	}
	return m, true, nil
}

// reconcileStreams moves a member towards its target tasks. owned is what
// the member reported owning (nil when it did not say).
func (s *shard) reconcileStreams(g *group, m *streamsMember, owned *streamsTasks) {
	sg := g.streams
	if m.state == memberUnrevoked {
		if owned == nil {
			return
		}
		for _, pair := range [][2]taskSet{{m.revoking.active, owned.active}, {m.revoking.standby, owned.standby}, {m.revoking.warmup, owned.warmup}} {
			for t := range pair[0] {
				if pair[1][t] {
					return
				}
			}
		}
		m.revoking = newStreamsTasks()
		m.state = memberStable
		m.revocation.stop()
	}
	target, ok := sg.target[m.id]
	if !ok {
		target = newStreamsTasks()
	}
	if m.epoch == sg.assignmentEpoch && m.state == memberStable && m.assigned.equal(target) {
		return
	}
	keep, revoke := newStreamsTasks(), newStreamsTasks()
	split := func(have, want, k, r taskSet) {
		for t := range have {
			if want[t] {
				k[t] = true
			} else {
				r[t] = true
			}
		}
	}
	split(m.assigned.active, target.active, keep.active, revoke.active)
	split(m.assigned.standby, target.standby, keep.standby, revoke.standby)
	split(m.assigned.warmup, target.warmup, keep.warmup, revoke.warmup)
	if len(revoke.active)+len(revoke.standby)+len(revoke.warmup) > 0 {
		m.assigned, m.revoking, m.state = keep, revoke, memberUnrevoked
		s.schedule(&m.revocation, max(m.rebalanceTimeout, time.Second), func() {
			s.fenceStreamsMember(g, m, "tasks not revoked within the rebalance timeout")
		})
		return
	}
	missing := 0
	for t := range target.active {
		if keep.active[t] {
			continue
		}
		if sg.activeOwnedByOthers(m, t) {
			missing++
			continue
		}
		keep.active[t] = true
	}
	for t := range target.standby {
		keep.standby[t] = true
	}
	for t := range target.warmup {
		keep.warmup[t] = true
	}
	m.assigned = keep
	if m.epoch != sg.assignmentEpoch {
		m.previousEpoch, m.epoch = m.epoch, sg.assignmentEpoch
	}
	m.state = memberStable
	if missing > 0 {
		m.state = memberUnreleased
	}
}

// streamsLeave handles a heartbeat with epoch -1 (leave) or -2 (a static
// member leaving for a moment: it keeps its tasks until its session ends).
func (s *shard) streamsLeave(g *group, req StreamsHeartbeatRequest, resp StreamsHeartbeatResponse, settings streamsSettings) StreamsHeartbeatResponse {
	if g == nil || g.streams == nil {
		resp.Err = ErrUnknownMemberID
		return resp
	}
	sg := g.streams
	m := sg.members[req.MemberID]
	if m == nil && req.InstanceID != nil {
		m = sg.members[sg.instances[*req.InstanceID]]
	}
	if m == nil {
		resp.Err = ErrUnknownMemberID
		return resp
	}
	if req.MemberEpoch == epochStaticLeave && m.instanceID != nil {
		m.departed = true
		s.schedule(&m.session, settings.sessionTimeout, func() { s.fenceStreamsMember(g, m, "static member did not return") })
		resp.Err = s.persistStreams(g, m)
		return resp
	}
	s.removeStreamsMember(g, m)
	resp.Err = s.persistStreams(g, nil)
	return resp
}

// fenceStreamsMember removes a member that stopped heartbeating or did not
// revoke in time.
func (s *shard) fenceStreamsMember(g *group, m *streamsMember, why string) {
	if g.streams == nil || g.streams.members[m.id] != m {
		return
	}
	s.c.log.Info("removing streams group member", "group", g.id, "member", m.id, "reason", why)
	s.removeStreamsMember(g, m)
	s.persistStreamsLogged(g, "member removed: "+why)
}

func (s *shard) removeStreamsMember(g *group, m *streamsMember) {
	sg := g.streams
	m.session.stop()
	m.revocation.stop()
	delete(sg.members, m.id)
	delete(sg.target, m.id)
	if m.instanceID != nil && sg.instances[*m.instanceID] == m.id {
		delete(sg.instances, *m.instanceID)
	}
	sg.epoch++
	sg.allDirty = true
	if len(sg.members) == 0 {
		sg.stateTime = s.now()
		sg.target = map[string]streamsTasks{}
		sg.assignmentEpoch = sg.epoch
		sg.shutdownRequest = false
	}
}

// partitionsByEndpoint maps every endpoint to the input partitions of the
// tasks its members own, for Interactive Queries.
func (sg *streamsGroup) partitionsByEndpoint() []StreamsEndpointPartitions {
	byEp := map[StreamsEndpoint]*StreamsEndpointPartitions{}
	add := func(dst map[string][]int32, tasks taskSet) {
		for t := range tasks {
			for _, topic := range sg.configured.sources[t.subtopology] {
				dst[topic] = append(dst[topic], t.partition)
			}
		}
	}
	for _, m := range sg.members {
		if m.endpoint == nil {
			continue
		}
		ep := byEp[*m.endpoint]
		if ep == nil {
			ep = &StreamsEndpointPartitions{Endpoint: *m.endpoint, Active: map[string][]int32{}, Standby: map[string][]int32{}}
			byEp[*m.endpoint] = ep
		}
		add(ep.Active, m.assigned.active)
		add(ep.Standby, m.assigned.standby)
	}
	out := make([]StreamsEndpointPartitions, 0, len(byEp))
	for _, ep := range byEp {
		for _, ps := range []map[string][]int32{ep.Active, ep.Standby} {
			for t := range ps {
				sort.Slice(ps[t], func(i, j int) bool { return ps[t][i] < ps[t][j] })
			}
		}
		out = append(out, *ep)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Endpoint.Host != out[j].Endpoint.Host {
			return out[i].Endpoint.Host < out[j].Endpoint.Host
		}
		return out[i].Endpoint.Port < out[j].Endpoint.Port
	})
	return out
}

func tasksFromIDs(ids []StreamsTaskIDs) taskSet {
	s := taskSet{}
	for _, id := range ids {
		for _, p := range id.Partitions {
			s[streamsTask{id.Subtopology, p}] = true
		}
	}
	return s
}

func taskIDs(s taskSet) []StreamsTaskIDs {
	by := s.sorted()
	out := make([]StreamsTaskIDs, 0, len(by))
	for st, ps := range by {
		out = append(out, StreamsTaskIDs{Subtopology: st, Partitions: ps})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Subtopology < out[j].Subtopology })
	return out
}

// sameTopology compares two topologies by what the coordinator uses.
func sameTopology(a, b *StreamsTopology) bool {
	return fmt.Sprint(*a) == fmt.Sprint(*b)
}
