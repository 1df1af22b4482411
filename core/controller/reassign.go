package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Reassignment asks to move one partition to Replicas; nil Replicas
// cancels the partition's reassignment in progress.
type Reassignment struct {
	Topic     string
	Partition int32
	Replicas  []int32
}

// ReassignmentStatus is one partition's reassignment in progress.
type ReassignmentStatus struct {
	Topic            string
	Partition        int32
	Replicas         []int32
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// AlterPartitionReassignments starts or cancels reassignments (Kafka's
// AlterPartitionReassignments). A new target takes effect at once as
// replicas = target + the replicas being removed; the reassignment
// completes, dropping the removed replicas and moving leadership into the
// target if needed, when the ISR holds every target replica (at once if it
// already does, otherwise when the leader's AlterPartition reports the new
// replicas caught up). errs follow reqs.
func (c *Controller) AlterPartitionReassignments(ctx context.Context, reqs []Reassignment) []error {
	errs := make([]error, len(reqs))
	var todo []int
	seen := map[[2]any]bool{}
	for i, r := range reqs {
		key := [2]any{r.Topic, r.Partition}
		if seen[key] {
			errs[i] = fmt.Errorf("controller: topic %q partition %d: %w: the request lists it more than once", r.Topic, r.Partition, ErrInvalidRequest)
			continue
		}
		seen[key] = true
		todo = append(todo, i)
	}
	retryStalePlans(ctx, c, todo, errs, func(todo []int) {
		c.writeMu.Lock()
		defer c.writeMu.Unlock()
		im := c.Image()
		var records []record
		var recordOf []int
		for _, i := range todo {
			ch, err := planReassignment(im, reqs[i], c.elrPolicyFor(im, reqs[i].Topic))
			errs[i] = err
			if err != nil {
				continue
			}
			if rec := ch.record(); rec != nil {
				records = append(records, rec)
				recordOf = append(recordOf, i)
			}
		}
		for j, err := range c.proposeAll(ctx, records) {
			errs[recordOf[j]] = err
			if err == nil {
				r := reqs[recordOf[j]]
				c.log.Info("partition reassignment", "topic", r.Topic, "partition", r.Partition, "target", r.Replicas)
			}
		}
	})
	return errs
}

// maxPlanAttempts bounds how often a partition change planned on a stale
// image is planned again.
const maxPlanAttempts = 5

// retryStalePlans runs attempt for the requests todo (indices into errs)
// after a barrier with the active controller, and again for those that
// failed with ErrInvalidUpdateVersion: a node that is not the active
// controller plans on its own image, which may trail the active one's by
// an ISR change committed meanwhile; the active controller refuses such a
// change by its partition epoch and a fresh plan usually succeeds.
func retryStalePlans(ctx context.Context, c *Controller, todo []int, errs []error, attempt func(todo []int)) {
	for n := 1; len(todo) > 0; n++ {
		if err := c.checkWritable(ctx); err != nil {
			for _, i := range todo {
				errs[i] = err
			}
			return
		}
		attempt(todo)
		if n == maxPlanAttempts {
			return
		}
		var stale []int
		for _, i := range todo {
			if errors.Is(errs[i], ErrInvalidUpdateVersion) {
				stale = append(stale, i)
			}
		}
		todo = stale
	}
}

func planReassignment(im *Image, r Reassignment, pol elrPolicy) (*change, error) {
	t, ok := im.Topic(r.Topic)
	if !ok || r.Partition < 0 || int(r.Partition) >= len(t.Partitions) {
		return nil, fmt.Errorf("controller: topic %q partition %d: %w", r.Topic, r.Partition, ErrUnknownTopic)
	}
	ch := newChange(t, r.Partition)
	if r.Replicas == nil {
		if !ch.p.Reassigning() {
			return nil, fmt.Errorf("controller: topic %q partition %d: %w", r.Topic, r.Partition, ErrNoReassignmentInProgress)
		}
		ch.revertReassignment(im, pol)
		return ch, nil
	}
	if err := checkAssignment(im, r.Topic, r.Partition, r.Replicas, 0); err != nil {
		return nil, err
	}
	// A new target replaces one in progress: start from the original replicas.
	if ch.p.Reassigning() {
		ch.revertReassignment(im, pol)
	}
	orig := ch.p.Replicas
	target := slices.Clone(r.Replicas)
	if slices.Equal(orig, target) {
		return ch, nil
	}
	var adding, removing []int32
	for _, id := range target {
		if !slices.Contains(orig, id) {
			adding = append(adding, id)
		}
	}
	replicas := slices.Clone(target)
	for _, id := range orig {
		if !slices.Contains(target, id) {
			removing = append(removing, id)
			replicas = append(replicas, id)
		}
	}
	ch.p.Replicas, ch.p.AddingReplicas, ch.p.RemovingReplicas = replicas, adding, removing
	if len(adding) == 0 && len(removing) == 0 {
		// Only the order changes (the preferred leader moves).
		ch.p.Replicas = target
		return ch, nil
	}
	ch.completeReassignment(im, pol, ch.p.ISR)
	return ch, nil
}

// completeReassignment finishes the change's reassignment if every target
// replica is in its ISR: the removed replicas leave, and leadership moves
// into the target when the leader is being removed. The ELR follows the
// new ISR from prevISR (the ISR before the change), as Kafka recomputes it
// after completing a reassignment.
func (ch *change) completeReassignment(im *Image, pol elrPolicy, prevISR []int32) {
	if !ch.p.Reassigning() {
		return
	}
	target := ch.p.TargetReplicas()
	for _, id := range target {
		if !slices.Contains(ch.p.ISR, id) {
			return
		}
	}
	ch.p.Replicas = target
	ch.p.ISR = slices.DeleteFunc(ch.p.ISR, func(id int32) bool { return !slices.Contains(target, id) })
	ch.p.AddingReplicas, ch.p.RemovingReplicas = nil, nil
	ch.updateELR(pol, prevISR)
	if !slices.Contains(target, ch.p.Leader) || !im.Usable(ch.p.Leader) {
		ch.electWithELR(im, pol, false, ch.topic.Partitions[ch.p.Index])
	}
}

// revertReassignment cancels the change's reassignment: the added
// replicas leave, the removed ones stay.
func (ch *change) revertReassignment(im *Image, pol elrPolicy) {
	orig := slices.DeleteFunc(slices.Clone(ch.p.Replicas), func(id int32) bool { return slices.Contains(ch.p.AddingReplicas, id) })
	isr := slices.DeleteFunc(slices.Clone(ch.p.ISR), func(id int32) bool { return !slices.Contains(orig, id) })
	prevISR := ch.p.ISR
	ch.p.Replicas, ch.p.AddingReplicas, ch.p.RemovingReplicas = orig, nil, nil
	ch.p.ISR = isr
	ch.updateELR(pol, prevISR)
	if !slices.Contains(ch.p.ISR, ch.p.Leader) {
		ch.electWithELR(im, pol, false, ch.topic.Partitions[ch.p.Index])
	}
}

// ListPartitionReassignments lists the reassignments in progress: of the
// given partitions (by topic), or of all partitions when parts is nil.
func (c *Controller) ListPartitionReassignments(parts map[string][]int32) []ReassignmentStatus {
	im := c.Image()
	var out []ReassignmentStatus
	add := func(t *Topic, p *Partition) {
		if p.Reassigning() {
			out = append(out, ReassignmentStatus{
				Topic: t.Name, Partition: p.Index, Replicas: slices.Clone(p.Replicas),
				AddingReplicas: slices.Clone(p.AddingReplicas), RemovingReplicas: slices.Clone(p.RemovingReplicas),
			})
		}
	}
	if parts == nil {
		for _, t := range sortedTopics(im) {
			for i := range t.Partitions {
				add(t, &t.Partitions[i])
			}
		}
		return out
	}
	for _, t := range sortedTopics(im) {
		ids, ok := parts[t.Name]
		if !ok {
			continue
		}
		for _, id := range ids {
			if id >= 0 && int(id) < len(t.Partitions) {
				add(t, &t.Partitions[id])
			}
		}
	}
	return out
}
