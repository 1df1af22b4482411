package controller

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/google/uuid"
)

// recordVersion is the metadata record format this code writes and reads.
const recordVersion = 1

// Record type tags (see the package doc for their payloads).
const (
	typeController       = "controller"
	typeRegisterBroker   = "register_broker"
	typeCreateTopic      = "create_topic"
	typeDeleteTopic      = "delete_topic"
	typeCreatePartitions = "create_partitions"
	typeSetConfigs       = "set_configs"
	typeProducerIDs      = "producer_ids"
)

// record is one metadata change. apply checks every precondition against
// the builder's image before changing anything, so a failed apply leaves the
// builder untouched.
type record interface {
	kind() string
	apply(b *builder, index uint64) error
}

type envelope struct {
	Version int             `json:"v"`
	Type    string          `json:"type"`
	Data    json.RawMessage `json:"data"`
}

func encodeRecord(r record) ([]byte, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("controller: encode %s record: %w", r.kind(), err)
	}
	return json.Marshal(envelope{Version: recordVersion, Type: r.kind(), Data: data})
}

func decodeRecord(b []byte) (record, error) {
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("controller: record: %w: %v", ErrCorrupt, err)
	}
	if env.Version != recordVersion {
		return nil, fmt.Errorf("controller: record: %w: unsupported version %d", ErrCorrupt, env.Version)
	}
	var r record
	switch env.Type {
	case typeController:
		r = &controllerRecord{}
	case typeRegisterBroker:
		r = &brokerRecord{}
	case typeCreateTopic:
		r = &topicRecord{}
	case typeDeleteTopic:
		r = &deleteTopicRecord{}
	case typeCreatePartitions:
		r = &partitionsRecord{}
	case typeSetConfigs:
		r = &configRecord{}
	case typeProducerIDs:
		r = &producerIDsRecord{}
	case typeCreateACLs:
		r = &createACLsRecord{}
	case typeDeleteACLs:
		r = &deleteACLsRecord{}
	case typeScramSet:
		r = &scramSetRecord{}
	case typeScramDelete:
		r = &scramDeleteRecord{}
	case typeSetClientQuota:
		r = &clientQuotaRecord{}
	case typePartitionChange:
		r = &partitionChangeRecord{}
	case typeBrokerState:
		r = &brokerStateRecord{}
	case typePlan:
		r = &planRecord{}
	default:
		return nil, fmt.Errorf("controller: record: %w: unknown type %q", ErrCorrupt, env.Type)
	}
	if err := json.Unmarshal(env.Data, r); err != nil {
		return nil, fmt.Errorf("controller: %s record: %w: %v", env.Type, ErrCorrupt, err)
	}
	return r, nil
}

type controllerRecord struct {
	NodeID int32 `json:"node_id"`
}

func (*controllerRecord) kind() string { return typeController }

func (r *controllerRecord) apply(b *builder, _ uint64) error {
	if r.NodeID < 0 {
		return fmt.Errorf("controller: controller record: %w: node id %d", ErrCorrupt, r.NodeID)
	}
	b.im.ControllerID = r.NodeID
	return nil
}

type brokerRecord struct {
	Broker
}

func (*brokerRecord) kind() string { return typeRegisterBroker }

func (r *brokerRecord) apply(b *builder, index uint64) error {
	if err := validateBroker(r.Broker); err != nil {
		return err
	}
	br := r.Broker
	br.Epoch = int64(index)
	b.brokers()[br.NodeID] = br
	return nil
}

type topicRecord struct {
	Name       string            `json:"name"`
	ID         uuid.UUID         `json:"id"`
	Internal   bool              `json:"internal,omitempty"`
	Partitions []Partition       `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

func (*topicRecord) kind() string { return typeCreateTopic }

func (r *topicRecord) apply(b *builder, _ uint64) error {
	if err := ValidateTopicName(r.Name); err != nil {
		return err
	}
	if _, ok := b.im.Topics[r.Name]; ok {
		return fmt.Errorf("controller: topic %q: %w", r.Name, ErrTopicExists)
	}
	if r.ID == uuid.Nil {
		return fmt.Errorf("controller: topic %q: %w: zero topic id", r.Name, ErrInvalidRequest)
	}
	if _, ok := b.im.TopicsByID[r.ID]; ok {
		return fmt.Errorf("controller: topic %q: %w: topic id %s is taken", r.Name, ErrTopicExists, r.ID)
	}
	if len(r.Partitions) == 0 {
		return fmt.Errorf("controller: topic %q: %w: no partitions", r.Name, ErrInvalidPartitions)
	}
	if err := checkPartitions(r.Name, r.Partitions, 0); err != nil {
		return err
	}
	b.putTopic(&Topic{Name: r.Name, ID: r.ID, Partitions: r.Partitions, Internal: r.Internal})
	if len(r.Configs) > 0 {
		b.configs()[ConfigResource{Type: ResourceTopic, Name: r.Name}] = r.Configs
	}
	return nil
}

// checkPartitions verifies that parts are numbered from first on and each
// has replicas.
func checkPartitions(topic string, parts []Partition, first int) error {
	for i, p := range parts {
		if int(p.Index) != first+i {
			return fmt.Errorf("controller: topic %q: %w: partition %d where %d was expected", topic, ErrInvalidPartitions, p.Index, first+i)
		}
		if len(p.Replicas) == 0 {
			return fmt.Errorf("controller: topic %q partition %d: %w: no replicas", topic, p.Index, ErrInvalidReplicaAssignment)
		}
	}
	return nil
}

type deleteTopicRecord struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

func (*deleteTopicRecord) kind() string { return typeDeleteTopic }

func (r *deleteTopicRecord) apply(b *builder, _ uint64) error {
	t, ok := b.im.TopicsByID[r.ID]
	if !ok || t.Name != r.Name {
		return fmt.Errorf("controller: topic %q (id %s): %w", r.Name, r.ID, ErrUnknownTopic)
	}
	b.removeTopic(t)
	return nil
}

type partitionsRecord struct {
	TopicID    uuid.UUID   `json:"topic_id"`
	Partitions []Partition `json:"partitions"`
}

func (*partitionsRecord) kind() string { return typeCreatePartitions }

func (r *partitionsRecord) apply(b *builder, _ uint64) error {
	t, ok := b.im.TopicsByID[r.TopicID]
	if !ok {
		return fmt.Errorf("controller: topic id %s: %w: %w", r.TopicID, ErrUnknownTopicID, ErrUnknownTopic)
	}
	if len(r.Partitions) == 0 {
		return fmt.Errorf("controller: topic %q: %w: no partitions to add", t.Name, ErrInvalidPartitions)
	}
	if err := checkPartitions(t.Name, r.Partitions, len(t.Partitions)); err != nil {
		return err
	}
	nt := *t
	nt.Partitions = make([]Partition, 0, len(t.Partitions)+len(r.Partitions))
	nt.Partitions = append(append(nt.Partitions, t.Partitions...), r.Partitions...)
	b.putTopic(&nt)
	return nil
}

type configRecord struct {
	Resource ConfigResource    `json:"resource"`
	Configs  map[string]string `json:"configs"`
}

func (*configRecord) kind() string { return typeSetConfigs }

func (r *configRecord) apply(b *builder, _ uint64) error {
	switch r.Resource.Type {
	case ResourceTopic:
		if _, ok := b.im.Topics[r.Resource.Name]; !ok {
			return fmt.Errorf("controller: topic %q: %w", r.Resource.Name, ErrUnknownTopic)
		}
	case ResourceBroker, ResourceGroup, ResourceClientMetrics:
	default:
		return fmt.Errorf("controller: config resource type %d: %w", r.Resource.Type, ErrInvalidRequest)
	}
	if len(r.Configs) == 0 {
		if _, ok := b.im.Configs[r.Resource]; ok {
			delete(b.configs(), r.Resource)
		}
		return nil
	}
	b.configs()[r.Resource] = r.Configs
	return nil
}

type producerIDsRecord struct {
	First int64 `json:"first"`
	Count int32 `json:"count"`
}

func (*producerIDsRecord) kind() string { return typeProducerIDs }

func (r *producerIDsRecord) apply(b *builder, _ uint64) error {
	if r.First != b.im.NextProducerID {
		return fmt.Errorf("controller: producer id block at %d: %w: next free id is %d", r.First, ErrInvalidRequest, b.im.NextProducerID)
	}
	if r.Count < 1 || r.First > math.MaxInt64-int64(r.Count) {
		return fmt.Errorf("controller: producer id block %d+%d: %w", r.First, r.Count, ErrInvalidRequest)
	}
	b.im.NextProducerID = r.First + int64(r.Count)
	return nil
}
