package api

import (
	"errors"
	"sync"

	"github.com/gregorbroker/gregor/core/controller"
)

// internalTopicMu serialises the creation of internal topics, so concurrent
// FindCoordinator requests create each one once.
var internalTopicMu sync.Mutex

// internalTopic is an internal topic the broker creates on first use, as
// Kafka does for __consumer_offsets and __transaction_state.
type internalTopic struct {
	name       string
	partitions int32
	// replicationFactor is capped by the live brokers; configFor builds the
	// topic configs from the capped value.
	replicationFactor int16
	configFor         func(rf int16) map[string]string
	// unavailable is the error when the topic is still missing afterwards.
	unavailable error
}

// ensureInternalTopic returns the topic, creating it first if it does not
// exist yet.
func (b *Broker) ensureInternalTopic(it internalTopic) (*controller.Topic, error) {
	if t, ok := b.Controller.Image().Topic(it.name); ok {
		return t, nil
	}
	internalTopicMu.Lock()
	defer internalTopicMu.Unlock()
	im := b.Controller.Image()
	if t, ok := im.Topic(it.name); ok {
		return t, nil
	}
	rf := it.replicationFactor
	// Fenced brokers cannot take replicas: cap by the live ones.
	if n := int16(len(im.LiveBrokerIDs())); n > 0 && rf > n {
		rf = n
	}
	ctx, cancel := b.ctx(0)
	defer cancel()
	res := b.Controller.CreateTopics(ctx, []controller.CreateTopic{{
		Name: it.name, NumPartitions: it.partitions, ReplicationFactor: rf, Configs: it.configFor(rf),
	}}, false)
	if err := res[0].Err; err != nil && !errors.Is(err, controller.ErrTopicExists) {
		return nil, err
	}
	b.Logger.Info("created an internal topic", "topic", it.name, "partitions", it.partitions, "replication_factor", rf)
	b.SyncPartitions(b.Controller.Image())
	t, ok := b.Controller.Image().Topic(it.name)
	if !ok {
		return nil, it.unavailable
	}
	return t, nil
}
