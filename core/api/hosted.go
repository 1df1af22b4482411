package api

import (
	"github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/partition"
)

// The handlers' names for what core/broker owns: the partitions hosted
// here, their configs and the internal topics.

// partition returns a hosted partition (see broker.Broker.Partition).
func (b *Broker) partition(topic string, index int32) (*partition.Partition, bool) {
	return b.Partition(topic, index)
}

func (b *Broker) partitionConfig(im *controller.Image, topic string) partition.Config {
	return b.TopicPartitionConfig(im, topic)
}

func (b *Broker) replicaAddr(im *controller.Image, id int32) string { return b.ReplicaAddr(im, id) }

// topicNameByID is the name of the topic with id in im, or "" when no
// topic has it (requests that name topics by id answer UNKNOWN_TOPIC_ID).
func topicNameByID(im *controller.Image, id [16]byte) string { return broker.TopicNameByID(im, id) }

// internalTopic is an internal topic the broker creates on first use.
type internalTopic struct {
	name              string
	partitions        int32
	replicationFactor int16
	configFor         func(rf int16) map[string]string
	unavailable       error
}

// ensureInternalTopic returns the topic, creating it first if it does not
// exist yet (see broker.Broker.EnsureInternalTopic).
func (b *Broker) ensureInternalTopic(it internalTopic) (*controller.Topic, error) {
	ctx, cancel := b.ctx(0)
	defer cancel()
	return b.EnsureInternalTopic(ctx, broker.InternalTopic{Name: it.name, Partitions: it.partitions,
		ReplicationFactor: it.replicationFactor, ConfigFor: it.configFor, Unavailable: it.unavailable})
}
