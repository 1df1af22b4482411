package broker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/replication"
	"github.com/gregorbroker/gregor/core/txn"
)

// Broker is the set of partitions hosted here and what follows them from
// the metadata image. The exported fields are wired once, before Open and
// Run, and not changed afterwards.
type Broker struct {
	Config     config.Config
	Controller *controller.Controller
	Logs       *log.Dir
	// Partitions is the set of open replicas: only the applier (Open, then
	// Run) adds and removes; anyone may look up.
	Partitions *partition.Set
	Logger     *slog.Logger
	Now        func() time.Time
	// Groups is the group coordinator, handed the __consumer_offsets
	// partitions led here; nil when there is none (the group APIs answer
	// COORDINATOR_NOT_AVAILABLE).
	Groups *group.Coordinator
	// Txns is the transaction coordinator, handed the __transaction_state
	// partitions led here; nil when there is none (the transaction APIs
	// answer COORDINATOR_NOT_AVAILABLE).
	Txns *txn.Coordinator
	// Extensions are the partitioners, retention policies and interceptors
	// topics pick; nil means every topic uses the built-ins.
	Extensions *extension.Set
	// Followers copies the partitions this broker follows from their
	// leaders; nil fetches nothing (a lone broker leads everything).
	Followers *replication.Followers
	// Throttle holds the replication quotas (leader and follower side),
	// set from the metadata image; nil never throttles.
	Throttle *replication.Throttle
	// Peers sends transaction markers, verifications and share-state
	// requests to other brokers; nil reaches no other broker (a lone
	// broker leads everything).
	Peers *replication.Peers
	// Done is closed when the broker shuts down; requests to peers and
	// long polls end early.
	Done <-chan struct{}

	applier applier

	// internalTopicMu serialises the creation of internal topics, so
	// concurrent FindCoordinator requests create each one once.
	internalTopicMu sync.Mutex

	// groupTopics is the topic list consumer groups assign from (GroupTopics).
	groupTopics topicsCache

	markersOnce sync.Once // builds markers
	markers     *txn.Markers
}

// partitionWait bounds how long a lookup waits for the applier to open a
// partition the image already assigns here.
const partitionWait = 5 * time.Second

// Partition returns a hosted partition. When the controller's image holds
// the partition but the applier has not applied that image yet, it waits
// (at most partitionWait) for it to.
func (b *Broker) Partition(topic string, index int32) (*partition.Partition, bool) {
	if p, ok := b.Partitions.Get(topic, index); ok {
		return p, true
	}
	im := b.Controller.Image()
	t, ok := im.Topic(topic)
	if !ok || index < 0 || int(index) >= len(t.Partitions) || b.applier.hasApplied(im.Offset) {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), partitionWait)
	defer cancel()
	if err := b.WaitApplied(ctx, im.Offset); err != nil {
		return nil, false
	}
	return b.Partitions.Get(topic, index)
}

// TopicConfig is a topic's effective configuration: broker defaults with the
// topic's overrides on top.
func (b *Broker) TopicConfig(im *controller.Image, topic string) map[string]string {
	m := b.Config.TopicDefaults()
	for k, v := range im.TopicConfig(topic) {
		m[k] = v
	}
	return m
}

// TopicPartitionConfig is the rules a partition of topic enforces under im.
func (b *Broker) TopicPartitionConfig(im *controller.Image, topic string) partition.Config {
	return PartitionConfig(b.Config, b.TopicConfig(im, topic))
}
