package controller

import (
	"context"
	"fmt"
	"slices"
)

// AlterPartition is a partition leader's request to change the ISR
// (Kafka's AlterPartition): the leader sends the leader epoch and partition
// epoch it knows with the ISR it wants, and gets the partition's new state.
// This node must be the partition's leader; on a node that is not the
// active controller the request is forwarded to it.
//
// Errors, as Kafka's: ErrUnknownTopic (UNKNOWN_TOPIC_OR_PARTITION),
// ErrStaleBrokerEpoch, ErrFencedLeaderEpoch (the leader epoch is old),
// ErrInvalidRequest (the caller is not the leader, or the ISR is not a
// subset of the replicas or lacks the leader), ErrInvalidUpdateVersion (the
// partition epoch is old), ErrIneligibleReplica (a member is fenced or
// shutting down), and ErrNotController (a newer epoch than the
// controller's: the caller should retry against a newer controller).
//
// When the ISR now holds every replica a reassignment adds, the same change
// completes the reassignment.
func (c *Controller) AlterPartition(ctx context.Context, topic string, partition, leaderEpoch, partitionEpoch int32, newISR []int32) (Partition, error) {
	return c.alterPartition(ctx, AlterPartitionRequest{
		BrokerID: c.cfg.NodeID, BrokerEpoch: -1, Topic: topic, Partition: partition,
		LeaderEpoch: leaderEpoch, PartitionEpoch: partitionEpoch, ISR: newISR,
	})
}

// AlterPartitionRequest is one ISR change as it travels to the active
// controller. BrokerEpoch -1 skips the broker epoch check.
type AlterPartitionRequest struct {
	BrokerID       int32
	BrokerEpoch    int64
	Topic          string
	Partition      int32
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []int32
}

func (c *Controller) alterPartition(ctx context.Context, req AlterPartitionRequest) (Partition, error) {
	if !c.isActive() {
		return c.forwardAlterPartition(ctx, req)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	im := c.Image()
	ch, err := planAlterPartition(im, req, c.elrPolicyFor(im, req.Topic))
	if err != nil {
		return Partition{}, err
	}
	if r := ch.record(); r != nil {
		if err := firstErr(c.proposeAsActive(ctx, []record{r})); err != nil {
			return Partition{}, err
		}
		c.log.Info("ISR changed", "topic", req.Topic, "partition", req.Partition, "isr", ch.p.ISR, "leader", ch.p.Leader)
	}
	t, ok := c.Image().Topic(req.Topic)
	if !ok || int(req.Partition) >= len(t.Partitions) {
		return Partition{}, fmt.Errorf("controller: topic %q partition %d: %w", req.Topic, req.Partition, ErrUnknownTopic)
	}
	return clonePartition(t.Partitions[req.Partition]), nil
}

func clonePartition(p Partition) Partition {
	p.Replicas, p.ISR = slices.Clone(p.Replicas), slices.Clone(p.ISR)
	p.AddingReplicas, p.RemovingReplicas = slices.Clone(p.AddingReplicas), slices.Clone(p.RemovingReplicas)
	p.ELR, p.LastKnownELR = slices.Clone(p.ELR), slices.Clone(p.LastKnownELR)
	return p
}

// planAlterPartition validates req against im as Kafka's controller does
// and returns the change.
func planAlterPartition(im *Image, req AlterPartitionRequest, pol elrPolicy) (*change, error) {
	where := fmt.Sprintf("controller: topic %q partition %d", req.Topic, req.Partition)
	t, ok := im.Topic(req.Topic)
	if !ok || req.Partition < 0 || int(req.Partition) >= len(t.Partitions) {
		return nil, fmt.Errorf("%s: %w", where, ErrUnknownTopic)
	}
	br, ok := im.Brokers[req.BrokerID]
	if !ok {
		return nil, fmt.Errorf("%s: broker %d: %w", where, req.BrokerID, ErrBrokerNotRegistered)
	}
	if req.BrokerEpoch != -1 && req.BrokerEpoch != br.Epoch {
		return nil, fmt.Errorf("%s: broker %d: %w: %d, the registration's is %d", where, req.BrokerID, ErrStaleBrokerEpoch, req.BrokerEpoch, br.Epoch)
	}
	p := &t.Partitions[req.Partition]
	switch {
	case req.LeaderEpoch > p.LeaderEpoch:
		return nil, fmt.Errorf("%s: %w: leader epoch %d is newer than this controller's %d", where, ErrNotController, req.LeaderEpoch, p.LeaderEpoch)
	case req.LeaderEpoch < p.LeaderEpoch:
		return nil, fmt.Errorf("%s: %w: %d, the partition is at %d", where, ErrFencedLeaderEpoch, req.LeaderEpoch, p.LeaderEpoch)
	case p.Leader != req.BrokerID:
		return nil, fmt.Errorf("%s: %w: broker %d is not the leader (%d)", where, ErrInvalidRequest, req.BrokerID, p.Leader)
	case req.PartitionEpoch > p.PartitionEpoch:
		return nil, fmt.Errorf("%s: %w: partition epoch %d is newer than this controller's %d", where, ErrNotController, req.PartitionEpoch, p.PartitionEpoch)
	case req.PartitionEpoch < p.PartitionEpoch:
		return nil, fmt.Errorf("%s: %w: %d, the partition is at %d", where, ErrInvalidUpdateVersion, req.PartitionEpoch, p.PartitionEpoch)
	case !slices.Contains(req.ISR, p.Leader):
		return nil, fmt.Errorf("%s: %w: the ISR %v does not contain the leader %d", where, ErrInvalidRequest, req.ISR, p.Leader)
	}
	if d := dupOf(req.ISR); d >= 0 {
		return nil, fmt.Errorf("%s: %w: ISR member %d is listed twice", where, ErrInvalidRequest, d)
	}
	for _, id := range req.ISR {
		if !slices.Contains(p.Replicas, id) {
			return nil, fmt.Errorf("%s: %w: ISR member %d is not a replica %v", where, ErrInvalidRequest, id, p.Replicas)
		}
		if id != p.Leader && !im.Usable(id) {
			return nil, fmt.Errorf("%s: %w: broker %d is fenced, shutting down, without a log dir or not registered", where, ErrIneligibleReplica, id)
		}
	}
	ch := newChange(t, req.Partition)
	ch.p.ISR = slices.Clone(req.ISR)
	ch.completeReassignment(im, pol, p.ISR)
	ch.updateELR(pol, p.ISR)
	return ch, nil
}
