package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// newMemberJoinTimeout bounds how long a new member may wait in its first
// JoinGroup before it is dropped (Kafka's NewMemberJoinTimeoutMs).
const newMemberJoinTimeout = 5 * time.Minute

// Protocol is one assignment protocol a classic member supports, with the
// member's metadata for it.
type Protocol struct {
	Name     string
	Metadata []byte
}

// member is a member of a classic group.
type member struct {
	id               string
	instanceID       *string
	clientID         string
	clientHost       string
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	protocolType     string
	protocols        []Protocol
	assignment       []byte
	// joinCh and syncCh are set while the member waits for its JoinGroup or
	// SyncGroup answer; each is buffered so that answering never blocks.
	joinCh  chan JoinResponse
	syncCh  chan SyncResponse
	isNew   bool
	session deadline
}

func (m *member) metadata(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// matches says whether protocols equal the member's current ones.
func (m *member) matches(protocols []Protocol) bool {
	if len(protocols) != len(m.protocols) {
		return false
	}
	for i, p := range protocols {
		if p.Name != m.protocols[i].Name || string(p.Metadata) != string(m.protocols[i].Metadata) {
			return false
		}
	}
	return true
}

func (m *member) answerJoin(r JoinResponse) {
	if m.joinCh != nil {
		m.joinCh <- r
		m.joinCh = nil
	}
}

func (m *member) answerSync(r SyncResponse) {
	if m.syncCh != nil {
		m.syncCh <- r
		m.syncCh = nil
	}
}

// classicGroup is the membership of a group using the classic protocol
// (JoinGroup/SyncGroup). A group that only commits offsets is a classic
// group without members and without a protocol type.
type classicGroup struct {
	g            *group
	state        State
	stateTime    time.Time
	protocolType string
	protocol     string
	generation   int32
	leader       string
	members      map[string]*member
	order        []string             // member ids in the order they joined
	instances    map[string]string    // group.instance.id -> member id
	pending      map[string]*deadline // ids handed out with MEMBER_ID_REQUIRED
	pendingSync  map[string]bool      // members yet to send SyncGroup this generation
	join         deadline             // the rebalance timeout, or the initial delay
	sync         deadline             // the pending-sync timeout
	// initialJoin is set while the first rebalance of an empty group waits
	// out group_initial_rebalance_delay_ms; newMemberAdded extends the wait.
	initialJoin    bool
	newMemberAdded bool
}

func newClassic(g *group, now time.Time) *classicGroup {
	return &classicGroup{g: g, state: StateEmpty, stateTime: now, members: map[string]*member{},
		instances: map[string]string{}, pending: map[string]*deadline{}, pendingSync: map[string]bool{}}
}

// restoreClassic rebuilds a classic group from its last metadata record: a
// group with members comes back Stable, and each member's session starts
// over.
func restoreClassic(s *shard, g *group, v *kmsg.GroupMetadataValue, now time.Time) *classicGroup {
	cg := newClassic(g, now)
	if v == nil {
		return cg
	}
	cg.protocolType, cg.generation = v.ProtocolType, v.Generation
	if v.Protocol != nil {
		cg.protocol = *v.Protocol
	}
	if v.Leader != nil {
		cg.leader = *v.Leader
	}
	if v.CurrentStateTimestamp >= 0 {
		cg.stateTime = time.UnixMilli(v.CurrentStateTimestamp)
	}
	for _, vm := range v.Members {
		m := &member{id: vm.MemberID, clientID: vm.ClientID, clientHost: vm.ClientHost,
			sessionTimeout: time.Duration(vm.SessionTimeoutMillis) * time.Millisecond,
			protocolType:   cg.protocolType,
			protocols:      []Protocol{{Name: cg.protocol, Metadata: vm.Subscription}},
			assignment:     vm.Assignment}
		m.rebalanceTimeout = time.Duration(vm.RebalanceTimeoutMillis) * time.Millisecond
		if vm.RebalanceTimeoutMillis < 0 {
			m.rebalanceTimeout = m.sessionTimeout
		}
		if vm.InstanceID != nil {
			id := *vm.InstanceID
			m.instanceID = &id
			cg.instances[id] = m.id
		}
		cg.members[m.id] = m
		cg.order = append(cg.order, m.id)
		s.scheduleSession(g, m, m.sessionTimeout)
	}
	if len(cg.members) > 0 {
		cg.state = StateStable
		if _, ok := cg.members[cg.leader]; !ok {
			cg.leader = cg.order[0]
		}
	}
	return cg
}

func (cg *classicGroup) transition(s *shard, st State) {
	cg.state = st
	cg.stateTime = s.now()
}

// supports says whether a member with these protocols may join: the first
// member sets the protocol type; later ones must share it and one protocol
// every member supports.
func (cg *classicGroup) supports(protocolType string, protocols []Protocol) bool {
	if protocolType == "" || len(protocols) == 0 {
		return false
	}
	if len(cg.members) == 0 {
		return true
	}
	if protocolType != cg.protocolType {
		return false
	}
	for _, p := range protocols {
		if cg.supportCount(p.Name) == len(cg.members) {
			return true
		}
	}
	return false
}

func (cg *classicGroup) supportCount(name string) int {
	n := 0
	for _, m := range cg.members {
		if hasProtocol(m.protocols, name) {
			n++
		}
	}
	return n
}

func hasProtocol(ps []Protocol, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

// selectProtocol is Kafka's vote: among the protocols every member
// supports, each member votes for the first it lists; the most votes win,
// ties going to the protocol listed first by the earliest member.
func (cg *classicGroup) selectProtocol() string {
	var candidates []string
	if len(cg.order) > 0 {
		for _, p := range cg.members[cg.order[0]].protocols {
			if cg.supportCount(p.Name) == len(cg.members) {
				candidates = append(candidates, p.Name)
			}
		}
	}
	votes := map[string]int{}
	for _, id := range cg.order {
		for _, p := range cg.members[id].protocols {
			if contains(candidates, p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	for _, c := range candidates {
		if best == "" || votes[c] > votes[best] {
			best = c
		}
	}
	return best
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// rebalanceTimeout is the longest rebalance timeout of the members.
func (cg *classicGroup) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range cg.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// allJoined says whether every member has rejoined and no member id handed
// out with MEMBER_ID_REQUIRED is still outstanding.
func (cg *classicGroup) allJoined() bool {
	if len(cg.pending) > 0 {
		return false
	}
	for _, m := range cg.members {
		if m.joinCh == nil {
			return false
		}
	}
	return true
}

func (cg *classicGroup) add(m *member) {
	if len(cg.members) == 0 {
		cg.protocolType = m.protocolType
	}
	if cg.leader == "" {
		cg.leader = m.id
	}
	cg.members[m.id] = m
	cg.order = append(cg.order, m.id)
	if m.instanceID != nil {
		cg.instances[*m.instanceID] = m.id
	}
}

// remove drops a member, answering any wait it had with UNKNOWN_MEMBER_ID
// and choosing a new leader if it led.
func (cg *classicGroup) remove(m *member) {
	m.session.stop()
	m.answerJoin(JoinResponse{Err: ErrUnknownMemberID, MemberID: m.id, Generation: -1})
	m.answerSync(SyncResponse{Err: ErrUnknownMemberID})
	delete(cg.members, m.id)
	for i, id := range cg.order {
		if id == m.id {
			cg.order = append(cg.order[:i:i], cg.order[i+1:]...)
			break
		}
	}
	if m.instanceID != nil && cg.instances[*m.instanceID] == m.id {
		delete(cg.instances, *m.instanceID)
	}
	delete(cg.pendingSync, m.id)
	if cg.leader == m.id {
		cg.leader = ""
		if len(cg.order) > 0 {
			cg.leader = cg.order[0]
		}
	}
}

// replaceID gives a static member a new member id, fencing the old one.
func (cg *classicGroup) replaceID(m *member, newID string) {
	oldID := m.id
	m.answerJoin(JoinResponse{Err: ErrFencedInstanceID, MemberID: oldID, Generation: -1})
	m.answerSync(SyncResponse{Err: ErrFencedInstanceID})
	delete(cg.members, oldID)
	m.id = newID
	cg.members[newID] = m
	for i, id := range cg.order {
		if id == oldID {
			cg.order[i] = newID
		}
	}
	if m.instanceID != nil {
		cg.instances[*m.instanceID] = newID
	}
	if cg.leader == oldID {
		cg.leader = newID
	}
	if cg.pendingSync[oldID] {
		delete(cg.pendingSync, oldID)
		cg.pendingSync[newID] = true
	}
}

// metadataValue is the group's record in Kafka's GroupMetadataValue schema.
// assignments, when not nil, replace the members' current assignments.
func (cg *classicGroup) metadataValue(assignments map[string][]byte) *kmsg.GroupMetadataValue {
	v := kmsg.NewGroupMetadataValue()
	v.ProtocolType, v.Generation = cg.protocolType, cg.generation
	if cg.protocol != "" {
		p := cg.protocol
		v.Protocol = &p
	}
	if cg.leader != "" {
		l := cg.leader
		v.Leader = &l
	}
	v.CurrentStateTimestamp = cg.stateTime.UnixMilli()
	for _, id := range cg.order {
		m := cg.members[id]
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID, vm.InstanceID, vm.ClientID, vm.ClientHost = m.id, m.instanceID, m.clientID, m.clientHost
		vm.RebalanceTimeoutMillis, vm.SessionTimeoutMillis = ms(m.rebalanceTimeout), ms(m.sessionTimeout)
		vm.Subscription = m.metadata(cg.protocol)
		if vm.Subscription == nil {
			vm.Subscription = []byte{}
		}
		vm.Assignment = m.assignment
		if assignments != nil {
			vm.Assignment = assignments[id]
		}
		if vm.Assignment == nil {
			vm.Assignment = []byte{}
		}
		v.Members = append(v.Members, vm)
	}
	return &v
}

// store writes the group's metadata record.
func (s *shard) store(g *group, assignments map[string][]byte) error {
	v := g.classic.metadataValue(assignments)
	return s.write([]kv{{encodeGroupKey(g.id), encodeGroupValue(v)}})
}

// subscribedTopics reads the topics from the members' consumer protocol
// subscriptions; it is unknown for other protocol types.
func (cg *classicGroup) subscribedTopics() (map[string]bool, bool) {
	if cg.protocolType != "consumer" {
		return nil, len(cg.members) == 0
	}
	topics := map[string]bool{}
	for _, m := range cg.members {
		var sub kmsg.ConsumerMemberMetadata
		if err := sub.ReadFrom(m.metadata(cg.protocol)); err != nil {
			return nil, false
		}
		for _, t := range sub.Topics {
			topics[t] = true
		}
	}
	return topics, true
}

func (cg *classicGroup) shutdown() {
	cg.join.stop()
	cg.sync.stop()
	for _, d := range cg.pending {
		d.stop()
	}
	for _, m := range cg.members {
		m.session.stop()
		m.answerJoin(JoinResponse{Err: ErrNotCoordinator, MemberID: m.id, Generation: -1})
		m.answerSync(SyncResponse{Err: ErrNotCoordinator})
	}
}
