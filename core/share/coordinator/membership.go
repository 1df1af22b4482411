package coordinator

import (
	"fmt"

	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/core/share"
)

// Share group membership is durable as Kafka keeps it: the group epoch
// (ShareGroupMetadata), each member's metadata (ShareGroupMemberMetadata)
// and current assignment with its member epoch
// (ShareGroupCurrentMemberAssignment) are written to the group's
// __consumer_offsets partition whenever an epoch changes, and answered only
// once the ISR has them. A broker that starts coordinating the partition
// reads them back before it answers a heartbeat of one of its share groups.

type kv struct{ key, value []byte }

// PersistMembership writes a share group's membership as it is now, with
// tombstones for the members written before that left.
func (c *Coordinator) PersistMembership(groupID string) error {
	p := c.broker.GroupPartition(groupID)
	if p == nil {
		return fmt.Errorf("%w: not the coordinator of %s", ErrNotCoordinator, groupID)
	}
	unlock := c.writeLock(share.PartitionKey{Group: groupID, TopicPartition: share.TopicPartition{Partition: -1}})
	defer unlock()
	c.memberMu.Lock()
	written := c.written[groupID]
	c.memberMu.Unlock()
	var recs []kv
	now := map[string]bool{}
	d, err := c.groups.Describe(groupID)
	if err == nil {
		ids := map[string][16]byte{}
		for name, t := range c.Topics() {
			ids[name] = t.ID
		}
		recs = append(recs, kv{share.EncodeGroupMetadataKey(groupID), share.EncodeGroupMetadataValue(d.GroupEpoch)})
		for _, m := range d.Members {
			now[m.MemberID] = true
			recs = append(recs,
				kv{share.EncodeMemberKey(groupID, m.MemberID), share.EncodeMemberValue(m)},
				kv{share.EncodeAssignmentKey(groupID, m.MemberID), share.EncodeAssignmentValue(m, ids)})
		}
	} else {
		recs = append(recs, kv{share.EncodeGroupMetadataKey(groupID), nil})
	}
	for id := range written {
		if !now[id] {
			recs = append(recs, kv{share.EncodeAssignmentKey(groupID, id), nil}, kv{share.EncodeMemberKey(groupID, id), nil})
		}
	}
	ts := c.Now().UnixMilli()
	rs := make([]record.Record, 0, len(recs))
	for _, r := range recs {
		rs = append(rs, record.Record{Key: r.key, Value: r.value})
	}
	batch, err := record.Encode(record.BatchSpec{FirstTimestamp: ts, MaxTimestamp: ts, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, rs)
	if err != nil {
		return fmt.Errorf("coordinator: encoding share group %s: %w", groupID, err)
	}
	_, epoch := p.Leadership()
	if err := p.AppendCoordinatorCommitted(epoch, batch, c.cfg.Fsync, c.cfg.WriteTimeout); err != nil {
		return fmt.Errorf("%w: writing share group %s: %w", ErrCoordinatorNotAvailable, groupID, err)
	}
	c.memberMu.Lock()
	c.written[groupID] = now
	c.memberMu.Unlock()
	return nil
}

// LoadMembership reads the share groups of a group's __consumer_offsets
// partition back, once per leader epoch of the partition, installing those
// this broker does not hold.
func (c *Coordinator) LoadMembership(groupID string) error {
	p := c.broker.GroupPartition(groupID)
	if p == nil {
		return nil
	}
	_, epoch := p.Leadership()
	c.memberMu.Lock()
	defer c.memberMu.Unlock()
	if e, ok := c.loadedGroups[p.Index]; ok && e == epoch {
		return nil
	}
	groups, err := c.readMembership(p)
	if err != nil {
		return err
	}
	for _, d := range groups {
		if c.groups.Restore(*d) {
			ids := map[string]bool{}
			for _, m := range d.Members {
				ids[m.MemberID] = true
			}
			c.written[d.GroupID] = ids
		}
	}
	c.loadedGroups[p.Index] = epoch
	return nil
}

func (c *Coordinator) readMembership(p *partition.Partition) (map[string]*share.Group, error) {
	names := map[[16]byte]string{}
	for name, t := range c.Topics() {
		names[t.ID] = name
	}
	type loading struct {
		g       share.Group
		members map[string]*share.Member
		meta    bool
	}
	all := map[string]*loading{}
	get := func(id string) *loading {
		if all[id] == nil {
			all[id] = &loading{g: share.Group{GroupID: id}, members: map[string]*share.Member{}}
		}
		return all[id]
	}
	off := p.Offsets()
	for at := off.LogStartOffset; at < off.HighWatermark; {
		rr, err := p.Read(at, 1<<20, true)
		if err != nil {
			return nil, fmt.Errorf("%w: reading %s-%d: %w", ErrCoordinatorLoadInProgress, p.Topic, p.Index, err)
		}
		if len(rr.Records) == 0 {
			break
		}
		for it := record.Batches(rr.Records); it.Next(); {
			h := it.Header()
			at = h.NextOffset()
			if h.IsControl() || h.IsTransactional() {
				continue
			}
			err := record.Records(it.Batch(), 16<<20, func(r record.Record) error {
				k, ok, err := share.DecodeGroupRecordKey(r.Key)
				if err != nil || !ok {
					return nil // not a share group record
				}
				l := get(k.Group)
				if k.MemberID == "" {
					if r.Value == nil {
						delete(all, k.Group)
						return nil
					}
					l.g.GroupEpoch, err = share.DecodeGroupMetadataValue(r.Value)
					l.meta = true
					return err
				}
				if r.Value == nil {
					delete(l.members, k.MemberID)
					return nil
				}
				m := l.members[k.MemberID]
				if m == nil {
					m = &share.Member{MemberID: k.MemberID}
					l.members[k.MemberID] = m
				}
				if k.Type == 10 {
					return share.DecodeMemberValue(r.Value, m)
				}
				return share.DecodeAssignmentValue(r.Value, m, names)
			})
			if err != nil {
				return nil, fmt.Errorf("coordinator: reading share groups of %s-%d: %w", p.Topic, p.Index, err)
			}
		}
	}
	out := map[string]*share.Group{}
	for id, l := range all {
		if !l.meta {
			continue
		}
		for _, m := range l.members {
			l.g.Members = append(l.g.Members, *m)
		}
		g := l.g
		out[id] = &g
	}
	return out, nil
}
