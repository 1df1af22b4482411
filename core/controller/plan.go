package controller

import (
	"context"
	"encoding/json"
	"fmt"
)

// typePlan tags a plan record: several records that apply together or not
// at all.
const typePlan = "plan"

// planRecord carries the records of one plan (a broker's loss: its state
// record and the partition changes that move its leaderships and ISR
// memberships) in one raft entry. They apply in order to a scratch copy of
// the image, which replaces the image only when every one of them applied,
// so no failure between proposing and applying can leave part of a plan in
// force: a broker recorded fenced or offline yet still leading, say.
// Records is each member's own envelope, as a single-record entry holds it.
type planRecord struct {
	Records []json.RawMessage `json:"records"`
}

func (*planRecord) kind() string { return typePlan }

func (r *planRecord) apply(b *builder, index uint64) error {
	if len(r.Records) == 0 {
		return fmt.Errorf("controller: plan record: %w: no records", ErrCorrupt)
	}
	scratch := newBuilder(b.im)
	for i, raw := range r.Records {
		m, err := decodeRecord(raw)
		if err != nil {
			return fmt.Errorf("controller: plan record %d of %d: %w", i+1, len(r.Records), err)
		}
		if m.kind() == typePlan {
			return fmt.Errorf("controller: plan record %d of %d: %w: a plan inside a plan", i+1, len(r.Records), ErrCorrupt)
		}
		if err := m.apply(scratch, index); err != nil {
			return fmt.Errorf("controller: plan record %d of %d (%s), nothing of the plan applied: %w", i+1, len(r.Records), m.kind(), err)
		}
	}
	// The scratch builder cloned what it wrote; what it did not write is
	// still b's, owned by b as before.
	b.im = scratch.im
	b.ownBrokers = b.ownBrokers || scratch.ownBrokers
	b.ownTopics = b.ownTopics || scratch.ownTopics
	b.ownByID = b.ownByID || scratch.ownByID
	b.ownConfs = b.ownConfs || scratch.ownConfs
	return nil
}

// newPlan wraps records in one plan record; a single record needs no
// wrapping and is returned as it is.
func newPlan(records []record) (record, error) {
	if len(records) == 1 {
		return records[0], nil
	}
	p := &planRecord{Records: make([]json.RawMessage, len(records))}
	for i, r := range records {
		if r.kind() == typePlan {
			return nil, fmt.Errorf("controller: plan: %w: a plan inside a plan", ErrInvalidRequest)
		}
		data, err := encodeRecord(r)
		if err != nil {
			return nil, err
		}
		p.Records[i] = data
	}
	return p, nil
}

// proposePlan proposes records planned together from this node's image
// while it was the active controller as one raft entry: either all of them
// apply or none does. The error is the first rejection (nothing applied),
// a raft failure, or ctx's error with the outcome unknown (but whole
// either way). Like proposeAsActive it refuses once leadership has moved.
// Callers hold writeMu.
func (c *Controller) proposePlan(ctx context.Context, records []record) error {
	if len(records) == 0 {
		return nil
	}
	p, err := newPlan(records)
	if err != nil {
		return err
	}
	return c.proposeAsActive(ctx, []record{p})[0]
}
