package controller

import (
	"maps"
	"slices"
	"sort"

	"github.com/google/uuid"
)

// ResourceType is a config resource's type, with Kafka's codes.
type ResourceType int8

// Config resource types.
const (
	ResourceTopic  ResourceType = 2
	ResourceBroker ResourceType = 4
	// ResourceGroup holds a group's configs (KIP-848, KIP-932); the group
	// need not exist.
	ResourceGroup ResourceType = 32
)

// OpType is an IncrementalAlterConfigs operation, with Kafka's codes.
type OpType int8

// Config operations.
const (
	OpSet      OpType = 0
	OpDelete   OpType = 1
	OpAppend   OpType = 2
	OpSubtract OpType = 3
)

// Broker is a registered broker.
type Broker struct {
	NodeID int32  `json:"node_id"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
	Rack   string `json:"rack,omitempty"`
	// Epoch is the raft index of the broker's latest registration record
	// (Kafka's broker epoch); RegisterBroker ignores the caller's value.
	Epoch int64 `json:"epoch,omitempty"`
	// Endpoints are the broker's listeners with their advertised
	// addresses; Host and Port are the first listener's.
	Endpoints []Endpoint `json:"endpoints,omitempty"`
	// Fenced brokers may not lead or join an ISR: a broker is fenced from
	// its registration until it has caught up with the metadata log, and
	// again when its session expires or its controlled shutdown ends.
	Fenced bool `json:"fenced,omitempty"`
	// InControlledShutdown is set while the broker's leaderships move away
	// before it stops.
	InControlledShutdown bool `json:"controlled_shutdown,omitempty"`
	// LogDirOffline is set once the broker reported its log directory
	// offline after a write or fsync error (Kafka's offline log dirs in the
	// broker heartbeat): it may not lead or join an ISR until it registers
	// again after a restart.
	LogDirOffline bool `json:"log_dir_offline,omitempty"`
	// ControllerAddress is where the node's controller listener (raft
	// and controller RPCs) is reached; empty on a single node.
	ControllerAddress string `json:"controller_address,omitempty"`
	// PreviousEpoch is, in a registration request only, the broker epoch
	// the broker's last clean shutdown recorded, or -1 (Kafka's
	// PreviousBrokerEpoch); 0 says nothing (a caller that does not know,
	// such as a test harness) and is taken as clean. It is not part of the
	// image.
	PreviousEpoch int64 `json:"-"`
}

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	Listener string `json:"listener"`
	Host     string `json:"host"`
	Port     int32  `json:"port"`
}

// Topic is a topic in the image. It is immutable: changes produce a new Topic.
type Topic struct {
	Name       string      `json:"name"`
	ID         uuid.UUID   `json:"id"`
	Partitions []Partition `json:"partitions"`
	Internal   bool        `json:"internal,omitempty"`
}

// ReplicationFactor is the replica count of partition 0 (0 if none).
func (t *Topic) ReplicationFactor() int16 {
	if len(t.Partitions) == 0 {
		return 0
	}
	return int16(len(t.Partitions[0].Replicas))
}

// Partition is one partition's assignment and leadership.
type Partition struct {
	Index          int32   `json:"index"`
	Leader         int32   `json:"leader"`
	LeaderEpoch    int32   `json:"leader_epoch"`
	PartitionEpoch int32   `json:"partition_epoch"`
	Replicas       []int32 `json:"replicas"`
	ISR            []int32 `json:"isr"`
	// AddingReplicas and RemovingReplicas describe a reassignment in
	// progress: Replicas holds the target replicas followed by the ones
	// being removed.
	AddingReplicas   []int32 `json:"adding,omitempty"`
	RemovingReplicas []int32 `json:"removing,omitempty"`
	// ELR are the eligible leader replicas (KIP-966): caught-up replicas
	// that left an ISR smaller than min.insync.replicas and may still be
	// elected cleanly once the ISR is empty. LastKnownELR is the last
	// leader of a partition whose ISR became empty.
	ELR          []int32 `json:"elr,omitempty"`
	LastKnownELR []int32 `json:"last_known_elr,omitempty"`
}

// Reassigning reports whether a reassignment of the partition is in
// progress.
func (p *Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// TargetReplicas are the replicas the partition will have once its
// reassignment completes (its replicas when none is in progress).
func (p *Partition) TargetReplicas() []int32 {
	out := make([]int32, 0, len(p.Replicas))
	for _, r := range p.Replicas {
		if !slices.Contains(p.RemovingReplicas, r) {
			out = append(out, r)
		}
	}
	return out
}

// ConfigResource names a topic or broker whose configs can be altered. A
// broker resource with an empty Name is the cluster-wide broker default.
type ConfigResource struct {
	Type ResourceType `json:"type"`
	Name string       `json:"name"`
}

// Image is the committed cluster metadata at one raft index. An Image and
// everything it points to are immutable; never modify them.
type Image struct {
	ClusterID string
	// ControllerID is the node id of the active controller as of Offset,
	// or -1 before any controller record.
	ControllerID int32
	// Offset is the raft index of the last log entry applied.
	Offset uint64

	Brokers    map[int32]Broker
	Topics     map[string]*Topic
	TopicsByID map[uuid.UUID]*Topic
	// Configs holds only explicitly set values.
	Configs map[ConfigResource]map[string]string
	// NextProducerID is the first producer id not yet allocated.
	NextProducerID int64

	// ACLs are the stored ACL bindings, sorted and unique.
	ACLs []ACLBinding
	// Scram holds SCRAM credentials by user, then mechanism code.
	Scram map[string]map[int8]ScramCredential
	// Quotas holds client quotas by their entity's key.
	Quotas map[string]ClientQuota
}

func emptyImage(clusterID string) *Image {
	return &Image{
		ClusterID:    clusterID,
		ControllerID: -1,
		Brokers:      map[int32]Broker{},
		Topics:       map[string]*Topic{},
		TopicsByID:   map[uuid.UUID]*Topic{},
		Configs:      map[ConfigResource]map[string]string{},
	}
}

// Topic finds a topic by name.
func (im *Image) Topic(name string) (*Topic, bool) {
	t, ok := im.Topics[name]
	return t, ok
}

// TopicByID finds a topic by id.
func (im *Image) TopicByID(id uuid.UUID) (*Topic, bool) {
	t, ok := im.TopicsByID[id]
	return t, ok
}

// TopicConfig returns a copy of the topic's explicit config overrides
// (empty, never nil, when there are none).
func (im *Image) TopicConfig(topic string) map[string]string {
	m := maps.Clone(im.Configs[ConfigResource{Type: ResourceTopic, Name: topic}])
	if m == nil {
		m = map[string]string{}
	}
	return m
}

// BrokerConfig returns a copy of the dynamic configs set on a broker
// resource: a node id, or "" for the cluster-wide default (empty, never
// nil, when there are none).
func (im *Image) BrokerConfig(name string) map[string]string {
	m := maps.Clone(im.Configs[ConfigResource{Type: ResourceBroker, Name: name}])
	if m == nil {
		m = map[string]string{}
	}
	return m
}

// Broker finds a registered broker.
func (im *Image) Broker(id int32) (Broker, bool) {
	b, ok := im.Brokers[id]
	return b, ok
}

// Usable reports whether broker id may lead partitions and join ISRs:
// registered, unfenced and not in controlled shutdown.
func (im *Image) Usable(id int32) bool {
	b, ok := im.Brokers[id]
	return ok && !b.Fenced && !b.InControlledShutdown && !b.LogDirOffline
}

// LiveBrokerIDs lists the registered, unfenced brokers in ascending order.
func (im *Image) LiveBrokerIDs() []int32 {
	ids := make([]int32, 0, len(im.Brokers))
	for _, id := range im.BrokerIDs() {
		if !im.Brokers[id].Fenced {
			ids = append(ids, id)
		}
	}
	return ids
}

// usableBrokerIDs lists the brokers new replicas may be placed on.
func (im *Image) usableBrokerIDs() []int32 {
	ids := make([]int32, 0, len(im.Brokers))
	for _, id := range im.BrokerIDs() {
		if im.Usable(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// Offline reports whether a partition has no usable leader.
func (im *Image) Offline(p *Partition) bool {
	return p.Leader < 0 || !im.Usable(p.Leader) && !im.inShutdown(p.Leader)
}

func (im *Image) inShutdown(id int32) bool {
	b, ok := im.Brokers[id]
	return ok && !b.Fenced && b.InControlledShutdown
}

// LiveControllerID is the active controller's id if that node is a live
// broker, otherwise fallback. Kafka's brokers name a live broker as the
// controller in Metadata so that admin clients reach one that forwards.
func (im *Image) LiveControllerID(fallback int32) int32 {
	if b, ok := im.Brokers[im.ControllerID]; ok && !b.Fenced {
		return im.ControllerID
	}
	return fallback
}

// BrokerIDs lists the registered brokers' ids in ascending order.
func (im *Image) BrokerIDs() []int32 {
	ids := make([]int32, 0, len(im.Brokers))
	for id := range im.Brokers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// builder derives the next Image from a base without touching the base: the
// top-level maps are cloned on first write, and topics are replaced, never
// modified.
type builder struct {
	im                                       *Image
	ownBrokers, ownTopics, ownByID, ownConfs bool
}

func newBuilder(base *Image) *builder {
	next := *base
	return &builder{im: &next}
}

func (b *builder) brokers() map[int32]Broker {
	if !b.ownBrokers {
		b.im.Brokers = maps.Clone(b.im.Brokers)
		if b.im.Brokers == nil {
			b.im.Brokers = map[int32]Broker{}
		}
		b.ownBrokers = true
	}
	return b.im.Brokers
}

func (b *builder) topics() map[string]*Topic {
	if !b.ownTopics {
		b.im.Topics = maps.Clone(b.im.Topics)
		if b.im.Topics == nil {
			b.im.Topics = map[string]*Topic{}
		}
		b.ownTopics = true
	}
	return b.im.Topics
}

func (b *builder) topicsByID() map[uuid.UUID]*Topic {
	if !b.ownByID {
		b.im.TopicsByID = maps.Clone(b.im.TopicsByID)
		if b.im.TopicsByID == nil {
			b.im.TopicsByID = map[uuid.UUID]*Topic{}
		}
		b.ownByID = true
	}
	return b.im.TopicsByID
}

func (b *builder) configs() map[ConfigResource]map[string]string {
	if !b.ownConfs {
		b.im.Configs = maps.Clone(b.im.Configs)
		if b.im.Configs == nil {
			b.im.Configs = map[ConfigResource]map[string]string{}
		}
		b.ownConfs = true
	}
	return b.im.Configs
}

// putTopic stores t under its name and id, replacing any previous version.
func (b *builder) putTopic(t *Topic) {
	b.topics()[t.Name] = t
	b.topicsByID()[t.ID] = t
}

// removeTopic drops t and its config overrides.
func (b *builder) removeTopic(t *Topic) {
	delete(b.topics(), t.Name)
	delete(b.topicsByID(), t.ID)
	res := ConfigResource{Type: ResourceTopic, Name: t.Name}
	if _, ok := b.im.Configs[res]; ok {
		delete(b.configs(), res)
	}
}
