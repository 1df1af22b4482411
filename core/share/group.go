package share

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// GroupsConfig is what share group coordination enforces: Kafka's
// group.share.session.timeout.ms (45 s), group.share.heartbeat.interval.ms
// (5 s) and group.share.max.size (200).
type GroupsConfig struct {
	SessionTimeout    time.Duration
	HeartbeatInterval time.Duration
	MaxSize           int
}

// TopicInfo is what the assignor needs of a topic.
type TopicInfo struct {
	ID         [16]byte
	Partitions int32
}

// Group states as Kafka's ShareGroupState names them.
const (
	StateEmpty  = "Empty"
	StateStable = "Stable"
	StateDead   = "Dead"
)

// AssignorName is the server-side assignor of share groups.
const AssignorName = "simple"

// Member is a share group member as described.
type Member struct {
	MemberID    string
	RackID      string
	ClientID    string
	ClientHost  string
	MemberEpoch int32
	Subscribed  []string
	// Assignment maps topic names to partitions.
	Assignment map[string][]int32
	lastSeen   time.Time
	// answered is the epoch last answered to the member: a heartbeat at it
	// is current even when the assignor has moved the member on since.
	answered int32
}

// Group is a share group as described.
type Group struct {
	GroupID         string
	State           string
	GroupEpoch      int32
	AssignmentEpoch int32
	Members         []Member
}

type group struct {
	id      string
	epoch   int32
	members map[string]*Member
	// overrides are group-level configs (share.session.timeout.ms and
	// share.heartbeat.interval.ms); zero means the broker's.
	sessionTimeout, heartbeatInterval time.Duration
}

// Groups is the share group coordinator of one broker: membership, member
// epochs and the simple assignor. Membership is kept in memory; a member
// that does not heartbeat within the session timeout is removed.
type Groups struct {
	cfg    GroupsConfig
	now    func() time.Time
	topics func() map[string]TopicInfo
	// onLeave is told of members that left or timed out, so their
	// acquired records are released.
	onLeave func(group, member string)

	mu     sync.Mutex // guards groups
	groups map[string]*group
}

// NewGroups returns a coordinator with no groups. topics lists the topics
// that exist now.
func NewGroups(cfg GroupsConfig, now func() time.Time, topics func() map[string]TopicInfo, onLeave func(group, member string)) *Groups {
	if now == nil {
		now = time.Now
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 45 * time.Second
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 5 * time.Second
	}
	if cfg.MaxSize <= 0 {
		cfg.MaxSize = 200
	}
	if onLeave == nil {
		onLeave = func(string, string) {}
	}
	return &Groups{cfg: cfg, now: now, topics: topics, onLeave: onLeave, groups: map[string]*group{}}
}

// HeartbeatRequest is a ShareGroupHeartbeat.
type HeartbeatRequest struct {
	GroupID     string
	MemberID    string
	MemberEpoch int32
	RackID      *string
	// Subscribed is nil when unchanged since the last heartbeat.
	Subscribed []string
	ClientID   string
	ClientHost string
}

// HeartbeatResult is the answer to a heartbeat. Assignment is nil when
// the member already knows it (its epoch did not change).
type HeartbeatResult struct {
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	Assignment        map[string][]int32
}

// Heartbeat joins (epoch 0), keeps alive (the member's epoch) or removes
// (epoch -1) a member, and answers its assignment when it changed.
func (g *Groups) Heartbeat(req HeartbeatRequest) (HeartbeatResult, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked()
	if req.GroupID == "" || req.MemberID == "" {
		return HeartbeatResult{}, fmt.Errorf("%w: group id and member id are required", ErrInvalidRequest)
	}
	gr := g.groups[req.GroupID]
	if req.MemberEpoch == -1 {
		if gr == nil || gr.members[req.MemberID] == nil {
			return HeartbeatResult{MemberEpoch: -1}, nil
		}
		g.removeLocked(gr, req.MemberID)
		return HeartbeatResult{MemberEpoch: -1, HeartbeatInterval: g.interval(gr)}, nil
	}
	if req.MemberEpoch < -1 {
		return HeartbeatResult{}, fmt.Errorf("%w: member epoch %d", ErrInvalidRequest, req.MemberEpoch)
	}
	if gr == nil {
		gr = &group{id: req.GroupID, members: map[string]*Member{}}
		g.groups[req.GroupID] = gr
	}
	m := gr.members[req.MemberID]
	changed := false
	switch {
	case m == nil && req.MemberEpoch != 0:
		return HeartbeatResult{}, fmt.Errorf("%w: %s in %s", ErrUnknownMemberID, req.MemberID, req.GroupID)
	case m == nil:
		if req.Subscribed == nil {
			return HeartbeatResult{}, fmt.Errorf("%w: a joining member must name its subscribed topics", ErrInvalidRequest)
		}
		if len(gr.members) >= g.cfg.MaxSize {
			return HeartbeatResult{}, fmt.Errorf("%w: %s has %d members", ErrGroupMaxSizeReached, req.GroupID, len(gr.members))
		}
		m = &Member{MemberID: req.MemberID}
		gr.members[req.MemberID] = m
		changed = true
	case req.MemberEpoch != 0 && req.MemberEpoch != m.MemberEpoch && req.MemberEpoch != m.answered:
		return HeartbeatResult{}, fmt.Errorf("%w: %d, the member is at %d", ErrFencedMemberEpoch, req.MemberEpoch, m.MemberEpoch)
	}
	m.lastSeen = g.now()
	m.ClientID, m.ClientHost = req.ClientID, req.ClientHost
	if req.RackID != nil {
		m.RackID = *req.RackID
	}
	if req.Subscribed != nil && !sameStrings(m.Subscribed, req.Subscribed) {
		m.Subscribed = append([]string(nil), req.Subscribed...)
		sort.Strings(m.Subscribed)
		changed = true
	}
	if changed || g.topicsChanged(gr) {
		g.assignLocked(gr)
	}
	res := HeartbeatResult{MemberEpoch: m.MemberEpoch, HeartbeatInterval: g.interval(gr)}
	if req.MemberEpoch != m.MemberEpoch {
		res.Assignment = copyAssignment(m.Assignment)
	}
	m.answered = m.MemberEpoch
	return res, nil
}

func (g *Groups) interval(gr *group) time.Duration {
	if gr.heartbeatInterval > 0 {
		return gr.heartbeatInterval
	}
	return g.cfg.HeartbeatInterval
}

func (g *Groups) sessionTimeout(gr *group) time.Duration {
	if gr.sessionTimeout > 0 {
		return gr.sessionTimeout
	}
	return g.cfg.SessionTimeout
}

// SetGroupTimeouts applies the group-level share.session.timeout.ms and
// share.heartbeat.interval.ms; zero restores the broker's.
func (g *Groups) SetGroupTimeouts(groupID string, session, heartbeat time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gr := g.groups[groupID]; gr != nil {
		gr.sessionTimeout, gr.heartbeatInterval = session, heartbeat
	}
}

func (g *Groups) removeLocked(gr *group, member string) {
	delete(gr.members, member)
	g.assignLocked(gr)
	g.onLeave(gr.id, member)
}

// Expire removes the members whose session timed out.
func (g *Groups) Expire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked()
}

func (g *Groups) expireLocked() {
	now := g.now()
	for _, gr := range g.groups {
		for id, m := range gr.members {
			if now.Sub(m.lastSeen) > g.sessionTimeout(gr) {
				g.removeLocked(gr, id)
			}
		}
	}
}

// topicsChanged reports whether a subscribed topic's partition count
// differs from what the current assignment was computed with.
func (g *Groups) topicsChanged(gr *group) bool {
	topics := g.topics()
	want := map[string]int32{}
	have := map[string]int32{}
	for _, m := range gr.members {
		for _, t := range m.Subscribed {
			want[t] = topics[t].Partitions
		}
		for t, ps := range m.Assignment {
			for _, p := range ps {
				have[t] = max(have[t], p+1)
			}
		}
	}
	for t, n := range want {
		if have[t] != n {
			return true
		}
	}
	return len(have) > len(want)
}

// assignLocked runs the simple assignor and bumps the group epoch and the
// epoch of every member whose assignment changed. Per topic, with n
// subscribed members and p partitions: p >= n spreads the partitions
// round robin, one member each; p < n gives every member one partition,
// partitions shared by several members, so that no member idles.
func (g *Groups) assignLocked(gr *group) {
	topics := g.topics()
	ids := make([]string, 0, len(gr.members))
	for id := range gr.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	next := map[string]map[string][]int32{}
	for _, id := range ids {
		next[id] = map[string][]int32{}
	}
	byTopic := map[string][]string{}
	for _, id := range ids {
		for _, t := range gr.members[id].Subscribed {
			byTopic[t] = append(byTopic[t], id)
		}
	}
	for t, subs := range byTopic {
		p := topics[t].Partitions
		if p <= 0 {
			continue
		}
		n := int32(len(subs))
		if p >= n {
			for i := int32(0); i < p; i++ {
				id := subs[i%n]
				next[id][t] = append(next[id][t], i)
			}
			continue
		}
		for j, id := range subs {
			next[id][t] = []int32{int32(j) % p}
		}
	}
	bumped := false
	for _, id := range ids {
		m := gr.members[id]
		if !sameAssignment(m.Assignment, next[id]) || m.MemberEpoch == 0 {
			if !bumped {
				gr.epoch++
				bumped = true
			}
			m.Assignment, m.MemberEpoch = next[id], gr.epoch
		}
	}
	if !bumped {
		gr.epoch++
	}
}

// Describe returns a share group; ErrGroupIDNotFound when it does not
// exist.
func (g *Groups) Describe(groupID string) (Group, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked()
	gr := g.groups[groupID]
	if gr == nil {
		return Group{}, fmt.Errorf("%w: %s", ErrGroupIDNotFound, groupID)
	}
	return g.describeLocked(gr), nil
}

func (g *Groups) describeLocked(gr *group) Group {
	d := Group{GroupID: gr.id, State: StateEmpty, GroupEpoch: gr.epoch, AssignmentEpoch: gr.epoch}
	if len(gr.members) > 0 {
		d.State = StateStable
	}
	for _, m := range gr.members {
		c := *m
		c.Subscribed = append([]string(nil), m.Subscribed...)
		c.Assignment = copyAssignment(m.Assignment)
		d.Members = append(d.Members, c)
	}
	sort.Slice(d.Members, func(i, j int) bool { return d.Members[i].MemberID < d.Members[j].MemberID })
	return d
}

// List returns every share group, by id.
func (g *Groups) List() []Group {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked()
	out := make([]Group, 0, len(g.groups))
	for _, gr := range g.groups {
		out = append(out, g.describeLocked(gr))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupID < out[j].GroupID })
	return out
}

// Exists reports whether a share group of this id exists.
func (g *Groups) Exists(groupID string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.groups[groupID] != nil
}

// Delete removes an empty share group; ErrNonEmptyGroup when it has
// members.
func (g *Groups) Delete(groupID string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked()
	gr := g.groups[groupID]
	if gr == nil {
		return fmt.Errorf("%w: %s", ErrGroupIDNotFound, groupID)
	}
	if len(gr.members) > 0 {
		return fmt.Errorf("%w: %s has %d members", ErrNonEmptyGroup, groupID, len(gr.members))
	}
	delete(g.groups, groupID)
	return nil
}

// Ensure creates an empty share group when none exists (a share group's
// offsets are altered before any member joined).
func (g *Groups) Ensure(groupID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.groups[groupID] == nil {
		g.groups[groupID] = &group{id: groupID, members: map[string]*Member{}}
	}
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	s := append([]string(nil), b...)
	sort.Strings(s)
	for i := range a {
		if a[i] != s[i] {
			return false
		}
	}
	return true
}

func sameAssignment(a, b map[string][]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for t, ps := range a {
		qs, ok := b[t]
		if !ok || len(ps) != len(qs) {
			return false
		}
		for i := range ps {
			if ps[i] != qs[i] {
				return false
			}
		}
	}
	return true
}

func copyAssignment(a map[string][]int32) map[string][]int32 {
	out := make(map[string][]int32, len(a))
	for t, ps := range a {
		out[t] = append([]int32(nil), ps...)
	}
	return out
}

// Restore installs a share group read back from its durable records when
// this broker holds no group of that id; its members count as alive from
// now, at the epochs they had. It reports whether the group was installed.
func (g *Groups) Restore(d Group) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.groups[d.GroupID] != nil {
		return false
	}
	gr := &group{id: d.GroupID, epoch: d.GroupEpoch, members: map[string]*Member{}}
	now := g.now()
	for _, m := range d.Members {
		c := m
		c.Subscribed = append([]string(nil), m.Subscribed...)
		sort.Strings(c.Subscribed)
		c.Assignment = copyAssignment(m.Assignment)
		c.lastSeen, c.answered = now, m.MemberEpoch
		gr.members[m.MemberID] = &c
	}
	g.groups[d.GroupID] = gr
	return true
}
