package api

import (
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
)

// groupOps is the bit set of group operations a client may perform while no
// authorizer is configured: READ, DELETE and DESCRIBE.
const groupOps = 1<<3 | 1<<6 | 1<<8

// assignGroupPartitions tells the coordinator which __consumer_offsets
// partitions this broker leads in im; SyncPartitions calls it.
func (b *Broker) assignGroupPartitions(im *controller.Image) {
	n, led := b.ledPartitions(im, group.OffsetsTopic)
	leaders := make(map[int32]group.Leader, len(led))
	for i, l := range led {
		leaders[i] = group.Leader{Partition: l.p, Epoch: l.epoch}
	}
	b.Groups.Assign(n, leaders)
}

// ledPartition is a partition this broker leads, at its leader epoch.
type ledPartition struct {
	p     *partition.Partition
	epoch int32
}

// ledPartitions lists the partitions of topic this broker leads in im and
// hosts; n is the topic's partition count, 0 when it does not exist.
func (b *Broker) ledPartitions(im *controller.Image, topic string) (n int32, led map[int32]ledPartition) {
	t, ok := im.Topic(topic)
	if !ok {
		return 0, nil
	}
	led = map[int32]ledPartition{}
	for _, pm := range t.Partitions {
		if pm.Leader != b.Config.NodeID {
			continue
		}
		if p, ok := b.Partitions.Get(t.Name, pm.Index); ok {
			led[pm.Index] = ledPartition{p: p, epoch: pm.LeaderEpoch}
		}
	}
	return int32(len(t.Partitions)), led
}

// offsetsTopic returns __consumer_offsets, creating it as Kafka does on the
// first FindCoordinator: compacted, with groups.offsets_topic_partitions
// partitions and a replication factor no larger than the live cluster.
func (b *Broker) offsetsTopic() (*controller.Topic, error) {
	gc := b.Config.Groups
	return b.ensureInternalTopic(internalTopic{
		name: group.OffsetsTopic, partitions: gc.OffsetsTopicPartitions,
		replicationFactor: gc.OffsetsTopicReplicationFactor,
		configFor: func(int16) map[string]string {
			return map[string]string{
				"cleanup.policy":   "compact",
				"segment.bytes":    strconv.FormatInt(gc.OffsetsTopicSegmentBytes, 10),
				"compression.type": "producer",
			}
		},
		unavailable: group.ErrCoordinatorNotAvailable,
	})
}

// clientHost is how Kafka shows a client's address: "/" and the IP.
func clientHost(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	if ta, ok := addr.(*net.TCPAddr); ok {
		return "/" + ta.IP.String()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "/" + addr.String()
	}
	return "/" + host
}

func millis(v int32) time.Duration { return time.Duration(v) * time.Millisecond }

// groupCode is errCode for a group API, COORDINATOR_NOT_AVAILABLE while no
// coordinator is wired in.
func (b *Broker) groupCode(err error) int16 {
	if b.Groups == nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	return errCode(err)
}

// topicsCache holds the topic list consumer groups assign from, rebuilt
// when the metadata image changes. Images are immutable, so the image
// pointer identifies the list (several brokers may share a process).
type topicsCache struct {
	mu     sync.Mutex // guards im, topics
	im     *controller.Image
	topics map[string]group.TopicInfo
}

var groupTopics topicsCache

// GroupTopics lists the topics that exist, for the group coordinator.
func (b *Broker) GroupTopics() map[string]group.TopicInfo {
	im := b.Controller.Image()
	groupTopics.mu.Lock()
	defer groupTopics.mu.Unlock()
	if groupTopics.im != im {
		m := make(map[string]group.TopicInfo, len(im.Topics))
		for name, t := range im.Topics {
			m[name] = group.TopicInfo{ID: t.ID, Partitions: int32(len(t.Partitions))}
		}
		groupTopics.topics, groupTopics.im = m, im
	}
	return groupTopics.topics
}
