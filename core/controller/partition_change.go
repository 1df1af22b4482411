package controller

import (
	"fmt"
	"slices"

	"github.com/google/uuid"
)

const (
	typePartitionChange = "partition_change"
	typeBrokerState     = "broker_state"
)

// partitionChangeRecord replaces one partition's leader, ISR and replicas.
// It applies only while the partition is still at PartitionEpoch (the epoch
// it was computed from), so a change planned on a stale image is rejected
// rather than overwriting a newer one. Applying it bumps the partition
// epoch; the leader epoch is bumped when the leader changes or replicas
// are removed, as Kafka does.
type partitionChangeRecord struct {
	TopicID        uuid.UUID `json:"topic_id"`
	Partition      int32     `json:"partition"`
	PartitionEpoch int32     `json:"partition_epoch"`
	Leader         int32     `json:"leader"`
	ISR            []int32   `json:"isr"`
	Replicas       []int32   `json:"replicas"`
	Adding         []int32   `json:"adding,omitempty"`
	Removing       []int32   `json:"removing,omitempty"`
	ELR            []int32   `json:"elr,omitempty"`
	LastKnownELR   []int32   `json:"last_known_elr,omitempty"`
}

func (*partitionChangeRecord) kind() string { return typePartitionChange }

func (r *partitionChangeRecord) apply(b *builder, _ uint64) error {
	t, ok := b.im.TopicsByID[r.TopicID]
	if !ok {
		return fmt.Errorf("controller: topic id %s: %w: %w", r.TopicID, ErrUnknownTopicID, ErrUnknownTopic)
	}
	if r.Partition < 0 || int(r.Partition) >= len(t.Partitions) {
		return fmt.Errorf("controller: topic %q partition %d: %w", t.Name, r.Partition, ErrUnknownTopic)
	}
	old := t.Partitions[r.Partition]
	if old.PartitionEpoch != r.PartitionEpoch {
		return fmt.Errorf("controller: topic %q partition %d: %w: the change was made at partition epoch %d, the partition is at %d",
			t.Name, r.Partition, ErrInvalidUpdateVersion, r.PartitionEpoch, old.PartitionEpoch)
	}
	next := Partition{
		Index:            old.Index,
		Leader:           r.Leader,
		LeaderEpoch:      old.LeaderEpoch,
		PartitionEpoch:   old.PartitionEpoch + 1,
		Replicas:         slices.Clone(r.Replicas),
		ISR:              slices.Clone(r.ISR),
		AddingReplicas:   slices.Clone(r.Adding),
		RemovingReplicas: slices.Clone(r.Removing),
		ELR:              slices.Clone(r.ELR),
		LastKnownELR:     slices.Clone(r.LastKnownELR),
	}
	if err := checkPartitionState(t.Name, &next); err != nil {
		return err
	}
	if next.Leader != old.Leader || removesReplicas(old.Replicas, next.Replicas) {
		next.LeaderEpoch++
	}
	nt := *t
	nt.Partitions = slices.Clone(t.Partitions)
	nt.Partitions[r.Partition] = next
	b.putTopic(&nt)
	return nil
}

func removesReplicas(old, next []int32) bool {
	for _, id := range old {
		if !slices.Contains(next, id) {
			return true
		}
	}
	return false
}

// checkPartitionState verifies a partition's invariants: replicas unique
// and non-empty, the ISR a subset of them, the leader -1 or in the ISR, and
// a reassignment's adding and removing replicas disjoint members of
// replicas.
func checkPartitionState(topic string, p *Partition) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("controller: topic %q partition %d: %w: %s", topic, p.Index, ErrInvalidRequest, fmt.Sprintf(format, args...))
	}
	if len(p.Replicas) == 0 {
		return bad("no replicas")
	}
	if dupOf(p.Replicas) >= 0 {
		return bad("replica %d is listed twice", dupOf(p.Replicas))
	}
	if dupOf(p.ISR) >= 0 {
		return bad("ISR member %d is listed twice", dupOf(p.ISR))
	}
	for _, id := range p.ISR {
		if !slices.Contains(p.Replicas, id) {
			return bad("ISR member %d is not a replica", id)
		}
	}
	for _, id := range p.ELR {
		if !slices.Contains(p.Replicas, id) || slices.Contains(p.ISR, id) {
			return bad("eligible leader replica %d is not a replica outside the ISR", id)
		}
	}
	if dupOf(p.ELR) >= 0 {
		return bad("eligible leader replica %d is listed twice", dupOf(p.ELR))
	}
	if p.Leader >= 0 && !slices.Contains(p.ISR, p.Leader) {
		return bad("leader %d is not in the ISR %v", p.Leader, p.ISR)
	}
	if p.Leader < -1 {
		return bad("leader %d", p.Leader)
	}
	for _, id := range append(slices.Clone(p.AddingReplicas), p.RemovingReplicas...) {
		if !slices.Contains(p.Replicas, id) {
			return bad("reassigned replica %d is not a replica", id)
		}
	}
	for _, id := range p.AddingReplicas {
		if slices.Contains(p.RemovingReplicas, id) {
			return bad("replica %d is both added and removed", id)
		}
	}
	return nil
}

// dupOf returns a value listed twice in ids, or -1.
func dupOf(ids []int32) int32 {
	for i, id := range ids {
		if slices.Contains(ids[i+1:], id) {
			return id
		}
	}
	return -1
}

// brokerStateRecord fences, unfences or marks the controlled shutdown of
// the broker registration with the given epoch; a record for an older
// registration is rejected.
type brokerStateRecord struct {
	NodeID             int32 `json:"node_id"`
	Epoch              int64 `json:"epoch"`
	Fenced             bool  `json:"fenced"`
	ControlledShutdown bool  `json:"controlled_shutdown"`
	// LogDirOffline marks the registration's log dir offline; it stays so
	// for the registration's life, whatever later records say.
	LogDirOffline bool `json:"log_dir_offline,omitempty"`
}

func (*brokerStateRecord) kind() string { return typeBrokerState }

func (r *brokerStateRecord) apply(b *builder, _ uint64) error {
	br, ok := b.im.Brokers[r.NodeID]
	if !ok {
		return fmt.Errorf("controller: broker %d: %w", r.NodeID, ErrBrokerNotRegistered)
	}
	if br.Epoch != r.Epoch {
		return fmt.Errorf("controller: broker %d: %w: %d, the registration's is %d", r.NodeID, ErrStaleBrokerEpoch, r.Epoch, br.Epoch)
	}
	br.Fenced, br.InControlledShutdown = r.Fenced, r.ControlledShutdown
	br.LogDirOffline = br.LogDirOffline || r.LogDirOffline
	b.brokers()[r.NodeID] = br
	return nil
}

// change is a partition change being planned from an image.
type change struct {
	topic *Topic
	p     Partition
}

func newChange(t *Topic, index int32) *change {
	p := t.Partitions[index]
	p.Replicas, p.ISR = slices.Clone(p.Replicas), slices.Clone(p.ISR)
	p.AddingReplicas, p.RemovingReplicas = slices.Clone(p.AddingReplicas), slices.Clone(p.RemovingReplicas)
	p.ELR, p.LastKnownELR = slices.Clone(p.ELR), slices.Clone(p.LastKnownELR)
	return &change{topic: t, p: p}
}

// record returns the change as a record, or nil if nothing changed.
func (c *change) record() *partitionChangeRecord {
	old := c.topic.Partitions[c.p.Index]
	c.pruneELR()
	if old.Leader == c.p.Leader && slices.Equal(old.ISR, c.p.ISR) && slices.Equal(old.Replicas, c.p.Replicas) &&
		slices.Equal(old.AddingReplicas, c.p.AddingReplicas) && slices.Equal(old.RemovingReplicas, c.p.RemovingReplicas) &&
		slices.Equal(old.ELR, c.p.ELR) && slices.Equal(old.LastKnownELR, c.p.LastKnownELR) {
		return nil
	}
	return &partitionChangeRecord{
		TopicID: c.topic.ID, Partition: c.p.Index, PartitionEpoch: old.PartitionEpoch,
		Leader: c.p.Leader, ISR: c.p.ISR, Replicas: c.p.Replicas,
		Adding: c.p.AddingReplicas, Removing: c.p.RemovingReplicas,
		ELR: c.p.ELR, LastKnownELR: c.p.LastKnownELR,
	}
}

// electClean picks a leader among the ISR's usable members, keeping the
// current leader when it qualifies and otherwise taking the first in
// replica order (the preferred replica first). It returns -1 if none
// qualifies.
func electClean(im *Image, p *Partition) int32 {
	if p.Leader >= 0 && slices.Contains(p.ISR, p.Leader) && im.Usable(p.Leader) {
		return p.Leader
	}
	for _, id := range p.TargetReplicas() {
		if slices.Contains(p.ISR, id) && im.Usable(id) {
			return id
		}
	}
	for _, id := range p.Replicas {
		if slices.Contains(p.ISR, id) && im.Usable(id) {
			return id
		}
	}
	return -1
}

// electUnclean picks the first usable replica outside the ISR, or -1.
func electUnclean(im *Image, p *Partition) int32 {
	for _, id := range p.Replicas {
		if im.Usable(id) {
			return id
		}
	}
	return -1
}

// elect sets the change's leader from its ISR; with unclean, a replica
// outside the ISR is taken as a last resort and becomes the whole ISR.
// It reports whether the partition has a leader afterwards.
func (c *change) elect(im *Image, unclean bool) bool {
	if l := electClean(im, &c.p); l >= 0 {
		c.p.Leader = l
		return true
	}
	if unclean {
		if l := electUnclean(im, &c.p); l >= 0 {
			c.p.Leader, c.p.ISR = l, []int32{l}
			return true
		}
	}
	c.p.Leader = -1
	return false
}

// removeFromISR drops id from the ISR unless it is the last member (Kafka
// keeps the last ISR member so that a clean election can pick it again).
func (c *change) removeFromISR(id int32) {
	if !slices.Contains(c.p.ISR, id) || len(c.p.ISR) == 1 {
		return
	}
	c.p.ISR = slices.DeleteFunc(c.p.ISR, func(x int32) bool { return x == id })
}
