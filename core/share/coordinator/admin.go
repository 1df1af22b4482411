package coordinator

import (
	"strings"

	"github.com/gregorbroker/gregor/core/share"
)

// GroupType is the group type and protocol type Kafka lists share groups
// with.
const GroupType = "share"

// Listing is one share group as ListGroups shows it.
type Listing struct {
	GroupID, State string
}

// List lists the share groups this broker coordinates whose state is one
// of states and whose type is one of types (empty: any).
func (c *Coordinator) List(states, types []string) []Listing {
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
	var out []Listing
	for _, g := range c.groups.List() {
		if c.broker.GroupPartition(g.GroupID) == nil {
			continue
		}
		if match(states, g.State) && match(types, GroupType) {
			out = append(out, Listing{GroupID: g.GroupID, State: g.State})
		}
	}
	return out
}

// DeleteGroup deletes an empty share group and the state of its
// share-partitions on this broker.
func (c *Coordinator) DeleteGroup(id string) error {
	if err := c.groups.Delete(id); err != nil {
		return err
	}
	if err := c.PersistMembership(id); err != nil {
		return err
	}
	for _, k := range c.parts.Group(id) {
		c.parts.Delete(k)
		if err := c.deleteState(k); err != nil {
			return err
		}
	}
	return nil
}

// DeleteTopicState forgets a group's share-partitions of one topic and
// their durable state (DeleteShareGroupOffsets).
func (c *Coordinator) DeleteTopicState(groupID string, topicID [16]byte) error {
	var first error
	for _, k := range c.parts.Group(groupID) {
		if k.TopicID != topicID {
			continue
		}
		c.parts.Delete(k)
		if err := c.deleteState(k); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ResetStart moves a share-partition of a partition led here to start,
// clamped to the log start and high watermark, with nothing in flight
// (AlterShareGroupOffsets): its state is initialized again in the next
// state epoch.
func (c *Coordinator) ResetStart(groupID string, tp share.TopicPartition, start int64) error {
	sp, p, _, _, err := c.local(groupID, tp)
	if err != nil {
		return err
	}
	off := p.Offsets()
	start = max(start, off.LogStartOffset)
	start = min(start, off.HighWatermark)
	return c.initialize(share.PartitionKey{Group: groupID, TopicPartition: tp}, sp, start)
}

// Offsets are a share-partition's start offset and lag as
// DescribeShareGroupOffsets shows them; ok is false when the group has no
// state for it.
type Offsets struct {
	StartOffset, Lag int64
	LeaderEpoch      int32
}

// DescribeOffsets returns a share-partition's offsets: from the
// share-partition when this broker serves it, from its durable state
// otherwise.
func (c *Coordinator) DescribeOffsets(groupID, topic string, tp share.TopicPartition) (Offsets, bool) {
	k := share.PartitionKey{Group: groupID, TopicPartition: tp}
	sp := c.parts.Lookup(k)
	if sp == nil {
		snap, _, ok, err := c.readState(k, -1)
		if err != nil || !ok {
			return Offsets{}, false
		}
		sp = share.Restore(share.PartitionConfig{}, c.cfg.Now, snap)
	}
	start, _ := sp.Offsets()
	out := Offsets{StartOffset: start, Lag: -1, LeaderEpoch: -1}
	if p, ok := c.broker.Partition(topic, tp.Partition); ok {
		_, out.LeaderEpoch = p.Leadership()
		out.Lag = sp.Lag(p.Offsets().HighWatermark)
	}
	return out, true
}
