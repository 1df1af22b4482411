package controller

import (
	"context"
	"fmt"
	"slices"
)

// ElectionType is ElectLeaders' election type, with Kafka's codes.
type ElectionType int8

// Election types.
const (
	// ElectPreferred moves leadership to the first replica if it is a live
	// ISR member.
	ElectPreferred ElectionType = 0
	// ElectUnclean elects a leader for a partition without a live one,
	// from outside the ISR if no ISR member is live.
	ElectUnclean ElectionType = 1
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// ElectionResult is one partition's election outcome.
type ElectionResult struct {
	TopicPartition
	Err error
}

// ElectLeaders runs elections (Kafka's ElectLeaders). parts nil means every
// partition; then partitions that need no election are left out of the
// results, as Kafka does. Per partition: ErrUnknownTopic,
// ErrElectionNotNeeded, ErrPreferredLeaderNotAvailable,
// ErrEligibleLeadersNotAvailable.
func (c *Controller) ElectLeaders(ctx context.Context, typ ElectionType, parts []TopicPartition) ([]ElectionResult, error) {
	if typ != ElectPreferred && typ != ElectUnclean {
		return nil, fmt.Errorf("controller: election type %d: %w", typ, ErrInvalidRequest)
	}
	if err := c.checkWritable(ctx); err != nil {
		return nil, err
	}
	all := parts == nil
	if all {
		for _, t := range sortedTopics(c.Image()) {
			for i := range t.Partitions {
				parts = append(parts, TopicPartition{t.Name, int32(i)})
			}
		}
	}
	errs := make([]error, len(parts))
	skip := make([]bool, len(parts))
	todo := make([]int, len(parts))
	for i := range todo {
		todo[i] = i
	}
	retryStalePlans(ctx, c, todo, errs, func(todo []int) {
		c.writeMu.Lock()
		defer c.writeMu.Unlock()
		im := c.Image()
		var records []record
		var recordOf []int
		for _, i := range todo {
			ch, err := planElection(im, typ, parts[i], c.elrPolicyFor(im, parts[i].Topic))
			skip[i] = all && err == errNoElection
			if err == errNoElection {
				err = fmt.Errorf("controller: topic %q partition %d: %w", parts[i].Topic, parts[i].Partition, ErrElectionNotNeeded)
			}
			errs[i] = err
			if err == nil {
				if r := ch.record(); r != nil {
					records = append(records, r)
					recordOf = append(recordOf, i)
				}
			}
		}
		for j, err := range c.proposeAll(ctx, records) {
			errs[recordOf[j]] = err
		}
	})
	results := make([]ElectionResult, 0, len(parts))
	for i, tp := range parts {
		if !skip[i] {
			results = append(results, ElectionResult{TopicPartition: tp, Err: errs[i]})
		}
	}
	return results, nil
}

// errNoElection marks a partition whose leader is already the right one.
var errNoElection = fmt.Errorf("controller: %w", ErrElectionNotNeeded)

// planElection plans one partition's election. With ELR on, a preferred
// replica in the ELR of an empty ISR qualifies, and an unclean election
// tries the ISR, the ELR and the last known leader before any replica, as
// Kafka's PartitionChangeBuilder.
func planElection(im *Image, typ ElectionType, tp TopicPartition, pol elrPolicy) (*change, error) {
	where := fmt.Sprintf("controller: topic %q partition %d", tp.Topic, tp.Partition)
	t, ok := im.Topic(tp.Topic)
	if !ok || tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) {
		return nil, fmt.Errorf("%s: %w", where, ErrUnknownTopic)
	}
	ch := newChange(t, tp.Partition)
	p := &ch.p
	if typ == ElectPreferred {
		preferred := p.Replicas[0]
		if p.Leader == preferred {
			return nil, errNoElection
		}
		eligible := pol.enabled && len(p.ISR) == 0 && slices.Contains(p.ELR, preferred)
		if !slices.Contains(p.ISR, preferred) && !eligible || !im.Usable(preferred) {
			return nil, fmt.Errorf("%s: %w: broker %d is not a live ISR member", where, ErrPreferredLeaderNotAvailable, preferred)
		}
		prev := ch.topic.Partitions[tp.Partition]
		p.Leader = preferred
		if eligible {
			p.ISR = []int32{preferred}
			p.ELR = slices.DeleteFunc(p.ELR, func(id int32) bool { return id == preferred })
		}
		ch.noteLastKnownLeader(pol, prev)
		return ch, nil
	}
	if p.Leader >= 0 && im.Usable(p.Leader) {
		return nil, errNoElection
	}
	if !ch.electWithELR(im, pol, true, ch.topic.Partitions[tp.Partition]) {
		return nil, fmt.Errorf("%s: %w: no replica of %v is live", where, ErrEligibleLeadersNotAvailable, p.Replicas)
	}
	return ch, nil
}
