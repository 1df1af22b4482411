package broker

import (
	"context"
	"errors"

	"github.com/gregorbroker/gregor/core/controller"
)

// InternalTopic is an internal topic the broker creates on first use, as
// Kafka does for __consumer_offsets and __transaction_state.
type InternalTopic struct {
	Name       string
	Partitions int32
	// ReplicationFactor is capped by the live brokers; ConfigFor builds
	// the topic configs from the capped value.
	ReplicationFactor int16
	ConfigFor         func(rf int16) map[string]string
	// Unavailable is the error when the topic is still missing afterwards.
	Unavailable error
}

// EnsureInternalTopic returns the topic, creating it first if it does not
// exist yet; a topic it creates is hosted here (as far as this broker has
// replicas of it) when it returns.
func (b *Broker) EnsureInternalTopic(ctx context.Context, it InternalTopic) (*controller.Topic, error) {
	if t, ok := b.Controller.Image().Topic(it.Name); ok {
		return t, nil
	}
	b.internalTopicMu.Lock()
	defer b.internalTopicMu.Unlock()
	im := b.Controller.Image()
	if t, ok := im.Topic(it.Name); ok {
		return t, nil
	}
	rf := it.ReplicationFactor
	// Fenced brokers cannot take replicas: cap by the live ones.
	if n := int16(len(im.LiveBrokerIDs())); n > 0 && rf > n {
		rf = n
	}
	res := b.Controller.CreateTopics(ctx, []controller.CreateTopic{{
		Name: it.Name, NumPartitions: it.Partitions, ReplicationFactor: rf, Configs: it.ConfigFor(rf),
	}}, false)
	if err := res[0].Err; err != nil && !errors.Is(err, controller.ErrTopicExists) {
		return nil, err
	}
	b.Logger.Info("created an internal topic", "topic", it.Name, "partitions", it.Partitions, "replication_factor", rf)
	if err := b.WaitImage(ctx); err != nil {
		b.Logger.Warn("an internal topic is not hosted yet", "topic", it.Name, "err", err)
	}
	t, ok := b.Controller.Image().Topic(it.Name)
	if !ok {
		return nil, it.Unavailable
	}
	return t, nil
}
