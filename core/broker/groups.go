package broker

import (
	"fmt"
	"strconv"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/partition"
)

// OffsetsTopic returns __consumer_offsets, creating it as Kafka does on the
// first FindCoordinator: compacted, with groups.offsets_topic_partitions
// partitions and a replication factor no larger than the live cluster.
func (b *Broker) OffsetsTopic() (*controller.Topic, error) {
	ctx, cancel := b.requestCtx()
	defer cancel()
	gc := b.Config.Groups
	return b.EnsureInternalTopic(ctx, InternalTopic{
		Name: group.OffsetsTopic, Partitions: gc.OffsetsTopicPartitions,
		ReplicationFactor: gc.OffsetsTopicReplicationFactor,
		ConfigFor: func(int16) map[string]string {
			return map[string]string{
				"cleanup.policy":   "compact",
				"segment.bytes":    strconv.FormatInt(gc.OffsetsTopicSegmentBytes, 10),
				"compression.type": "producer",
			}
		},
		Unavailable: group.ErrCoordinatorNotAvailable,
	})
}

// Group metadata follows log.durability as committed offsets do: on fsync
// durability a group API that wrote to __consumer_offsets (an assignment, a
// member joining or leaving, a consumer group's state, a deletion) answers
// once the group's partition is on disk. A partition with nothing new to
// flush costs nothing, and concurrent answers share one fsync.

// GroupFsync says whether group writes must reach the disk before an answer.
func (b *Broker) GroupFsync() bool {
	return b.Groups != nil && b.Config.Log.Durability == config.DurabilityFsync
}

// SyncGroups flushes the __consumer_offsets partitions of groups that this
// broker coordinates; nothing when log.durability is not fsync.
func (b *Broker) SyncGroups(groups ...string) error {
	if !b.GroupFsync() {
		return nil
	}
	done := map[*partition.Partition]bool{}
	for _, g := range groups {
		p := b.Groups.Partition(g)
		if p == nil || done[p] {
			continue
		}
		done[p] = true
		if err := p.Sync(); err != nil {
			b.Logger.Error("fsync of group metadata failed", "group", g, "err", err)
			return fmt.Errorf("broker: fsync of group %q: %w", g, err)
		}
	}
	return nil
}
