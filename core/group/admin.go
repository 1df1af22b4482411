package group

import (
	"fmt"
	"sort"
	"strings"
)

// MemberDescription is a member as DescribeGroups shows it.
type MemberDescription struct {
	MemberID   string
	InstanceID *string
	ClientID   string
	ClientHost string
	// Metadata and Assignment are empty unless the group is Stable.
	Metadata   []byte
	Assignment []byte
}

// GroupDescription is a classic group as DescribeGroups shows it.
type GroupDescription struct {
	Group        string
	Type         string
	State        State
	ProtocolType string
	Protocol     string
	Members      []MemberDescription
}

// DescribeGroup describes a group. It is ErrGroupIDNotFound when the group
// does not exist; a consumer group is described with its type and state
// only (ConsumerGroupDescribe shows the rest).
func (c *Coordinator) DescribeGroup(id string) (GroupDescription, error) {
	s, err := c.lockShard(id)
	if err != nil {
		return GroupDescription{}, err
	}
	defer s.mu.Unlock()
	g := s.group(id)
	if g == nil {
		return GroupDescription{}, ErrGroupIDNotFound
	}
	d := GroupDescription{Group: id, Type: g.typ(), State: g.state(), ProtocolType: g.protocolType()}
	if g.consumer != nil || g.streams != nil {
		return d, nil
	}
	cg := g.classic
	stable := cg.state == StateStable
	if stable {
		d.Protocol = cg.protocol
	}
	for _, mid := range cg.order {
		m := cg.members[mid]
		md := MemberDescription{MemberID: m.id, InstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost,
			Metadata: []byte{}, Assignment: []byte{}}
		if stable {
			md.Metadata, md.Assignment = m.metadata(cg.protocol), m.assignment
		}
		d.Members = append(d.Members, md)
	}
	return d, nil
}

// GroupListing is a group as ListGroups shows it.
type GroupListing struct {
	Group        string
	ProtocolType string
	State        State
	Type         string
}

// ListGroups lists the groups this broker coordinates whose state and type
// are among states and types (any, when empty; compared without case). It
// returns ErrCoordinatorLoadInProgress with the groups it could list when a
// partition is still loading.
func (c *Coordinator) ListGroups(states, types []string) ([]GroupListing, error) {
	match := func(set []string, v string) bool {
		if len(set) == 0 {
			return true
		}
		for _, x := range set {
			if strings.EqualFold(x, v) {
				return true
			}
		}
		return false
	}
	var out []GroupListing
	var err error
	for _, s := range c.allShards() {
		s.mu.Lock()
		if e := s.usable(); e != nil {
			if e == ErrCoordinatorLoadInProgress {
				err = e
			}
			s.mu.Unlock()
			continue
		}
		for _, g := range s.groups {
			l := GroupListing{Group: g.id, ProtocolType: g.protocolType(), State: g.state(), Type: g.typ()}
			if match(states, string(l.State)) && match(types, l.Type) {
				out = append(out, l)
			}
		}
		s.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out, err
}

// DeleteGroups deletes empty groups with their offsets, returning one error
// (or nil) per group.
func (c *Coordinator) DeleteGroups(ids []string) []error {
	errs := make([]error, len(ids))
	for i, id := range ids {
		errs[i] = c.deleteGroup(id)
	}
	return errs
}

func (c *Coordinator) deleteGroup(id string) error {
	s, err := c.lockShard(id)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	g := s.group(id)
	if g == nil {
		return ErrGroupIDNotFound
	}
	if !g.empty() {
		return ErrNonEmptyGroup
	}
	recs := make([]kv, 0, len(g.offsets)+1)
	for tp := range g.offsets {
		recs = append(recs, kv{key: encodeOffsetKey(id, tp)})
	}
	recs = append(recs, g.memberTombstones()...)
	recs = append(recs, kv{key: encodeGroupKey(id)})
	if err := s.write(recs); err != nil {
		return err
	}
	g.shutdown()
	delete(s.groups, id)
	s.c.log.Info("deleted group", "group", id, "offsets", len(g.offsets))
	return nil
}

// ConsumerMemberDescription is a consumer group member as
// ConsumerGroupDescribe shows it; assignments are by topic name.
type ConsumerMemberDescription struct {
	MemberID         string
	InstanceID       *string
	RackID           *string
	MemberEpoch      int32
	ClientID         string
	ClientHost       string
	SubscribedTopics []string
	SubscribedRegex  *string
	Assignment       map[string][]int32
	Target           map[string][]int32
}

// ConsumerGroupDescription is a consumer (KIP-848) group.
type ConsumerGroupDescription struct {
	Group           string
	State           State
	Epoch           int32
	AssignmentEpoch int32
	Assignor        string
	Members         []ConsumerMemberDescription
}

// DescribeConsumerGroup describes a consumer group; a missing group, or a
// classic one, is ErrGroupIDNotFound.
func (c *Coordinator) DescribeConsumerGroup(id string) (ConsumerGroupDescription, error) {
	s, err := c.lockShard(id)
	if err != nil {
		return ConsumerGroupDescription{}, err
	}
	defer s.mu.Unlock()
	g := s.group(id)
	if g == nil {
		return ConsumerGroupDescription{}, ErrGroupIDNotFound
	}
	if g.consumer == nil {
		return ConsumerGroupDescription{}, fmt.Errorf("%w: group %s is not a consumer group", ErrGroupIDNotFound, id)
	}
	cg := g.consumer
	d := ConsumerGroupDescription{Group: id, State: cg.state(), Epoch: cg.epoch, AssignmentEpoch: cg.assignmentEpoch,
		Assignor: cg.assignor}
	if d.Assignor == "" {
		d.Assignor = c.cfg.ConsumerAssignors[0]
	}
	ids := make([]string, 0, len(cg.members))
	for mid := range cg.members {
		ids = append(ids, mid)
	}
	sort.Strings(ids)
	for _, mid := range ids {
		m := cg.members[mid]
		d.Members = append(d.Members, ConsumerMemberDescription{
			MemberID: m.id, InstanceID: m.instanceID, RackID: m.rackID, MemberEpoch: m.epoch,
			ClientID: m.clientID, ClientHost: m.clientHost, SubscribedTopics: append([]string(nil), m.topics...),
			SubscribedRegex: m.regex, Assignment: m.assigned.sorted(), Target: setOf(cg.target[mid]).sorted(),
		})
	}
	return d, nil
}
