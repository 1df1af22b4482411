package coordinator

import (
	"errors"
	"fmt"
	"time"

	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/core/share"
)

// Ack is one acknowledgement batch of ShareFetch or ShareAcknowledge.
type Ack struct {
	First, Last int64
	Types       []share.AckType
}

// Fetched is what one partition of a ShareFetch acquired.
type Fetched struct {
	// Err is the partition's error; Leader and Epoch are the partition's
	// leadership as this broker knows it.
	Err           error
	Leader, Epoch int32
	// Records end with the last batch holding an acquired record.
	Records  []byte
	Acquired []share.AcquiredRange
}

// local finds the share-partition of a partition this broker leads.
func (c *Coordinator) local(groupID string, tp share.TopicPartition) (sp *share.Partition, p *partition.Partition, leader, epoch int32, err error) {
	name, ok := c.TopicName(tp.TopicID)
	if !ok {
		return nil, nil, -1, -1, ErrUnknownTopicID
	}
	p, ok = c.broker.Partition(name, tp.Partition)
	if !ok {
		return nil, nil, -1, -1, ErrUnknownTopicOrPartition
	}
	leader, epoch = p.Leadership()
	if leader != c.cfg.NodeID {
		return nil, nil, leader, epoch, fmt.Errorf("%w: %s-%d is led by %d", ErrNotLeader, name, tp.Partition, leader)
	}
	sp, err = c.sharePartition(groupID, tp, p)
	if err != nil {
		c.log.Warn("loading share state", "group", groupID, "partition", tp.Partition, "err", err)
		// Retriable for the client: the state partition is on its way.
		return nil, nil, leader, epoch, fmt.Errorf("%w: %w", ErrNotLeader, err)
	}
	return sp, p, leader, epoch, nil
}

// Leadership is a share-partition's leader and epoch as this broker
// knows them; ok is false for a partition it does not host.
func (c *Coordinator) Leadership(tp share.TopicPartition) (leader, epoch int32, ok bool) {
	name, ok := c.TopicName(tp.TopicID)
	if !ok {
		return -1, -1, false
	}
	p, ok := c.broker.Partition(name, tp.Partition)
	if !ok {
		return -1, -1, false
	}
	leader, epoch = p.Leadership()
	return leader, epoch, true
}

// Acknowledge applies a partition's acknowledgements and makes them
// durable; the first failure is the partition's acknowledge error.
func (c *Coordinator) Acknowledge(groupID, member string, tp share.TopicPartition, acks []Ack) error {
	sp, _, _, _, err := c.local(groupID, tp)
	if err != nil {
		return err
	}
	var ackErr error
	applied := false
	for _, a := range acks {
		if ackErr = sp.Acknowledge(member, a.First, a.Last, a.Types); ackErr != nil {
			break
		}
		applied = true
	}
	if applied {
		if err := c.persist(share.PartitionKey{Group: groupID, TopicPartition: tp}, sp); err != nil {
			c.log.Warn("writing share state", "group", groupID, "partition", tp.Partition, "err", err)
			return err
		}
	}
	return ackErr
}

// Acquire reads from the share-partition's fetch offset and acquires for
// member what it may, up to maxRecords and maxBytes; strict is ShareFetch
// v2's record-limit mode.
func (c *Coordinator) Acquire(groupID, member string, tp share.TopicPartition, maxRecords int, strict bool, maxBytes int) Fetched {
	sp, p, leader, epoch, err := c.local(groupID, tp)
	res := Fetched{Err: err, Leader: leader, Epoch: epoch}
	if err != nil {
		return res
	}
	set := c.Settings(groupID)
	for try := 0; try < 2; try++ {
		offset, ok := sp.FetchOffset()
		if !ok {
			return res
		}
		read := p.Read
		if set.ReadCommitted {
			read = p.ReadCommitted
		}
		rr, err := read(offset, maxBytes, true)
		if errors.Is(err, partition.ErrOffsetOutOfRange) {
			// The log start moved past the share-partition (retention or
			// DeleteRecords): those records are gone for the group too.
			if off := p.Offsets(); offset < off.LogStartOffset {
				sp.Reset(off.LogStartOffset)
				continue
			}
			return res
		}
		if err != nil {
			res.Err = err
			return res
		}
		if len(rr.Records) == 0 {
			return res
		}
		var batches []share.BatchInfo
		var ends []int
		for it := record.Batches(rr.Records); it.Next(); {
			h := it.Header()
			batches = append(batches, share.BatchInfo{FirstOffset: h.BaseOffset, LastOffset: h.LastOffset(),
				ProducerID: h.ProducerID, Transactional: h.IsTransactional(), Control: h.IsControl()})
			ends = append(ends, it.Consumed())
		}
		opts := share.AcquireOptions{MaxRecords: maxRecords, Strict: strict, ReadCommitted: set.ReadCommitted}
		for _, a := range rr.Aborted {
			opts.Aborted = append(opts.Aborted, share.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset, LastOffset: a.LastOffset})
		}
		res.Acquired = sp.Acquire(member, batches, opts)
		if len(res.Acquired) == 0 {
			if try == 0 && len(batches) > 0 {
				continue // only archived records (aborted, control): read on
			}
			return res
		}
		// The delivery counts are durable before the records leave.
		if err := c.persist(share.PartitionKey{Group: groupID, TopicPartition: tp}, sp); err != nil {
			c.log.Warn("writing share state", "group", groupID, "partition", tp.Partition, "err", err)
			// The records never leave: no delivery happened.
			sp.Unacquire(member, res.Acquired)
			res.Acquired, res.Err = nil, err
			return res
		}
		last := res.Acquired[len(res.Acquired)-1].LastOffset
		end := len(rr.Records)
		for i, bi := range batches {
			if bi.LastOffset >= last {
				end = ends[i]
				break
			}
		}
		res.Records = rr.Records[:end]
		return res
	}
	return res
}

// WaitUntil is when a share fetch that found nothing should look again:
// the earliest acquisition lock deadline among its partitions (zero:
// never), and the channels that say new records arrived.
func (c *Coordinator) WaitUntil(groupID string, parts []share.TopicPartition) (time.Time, []<-chan struct{}) {
	var until time.Time
	var chans []<-chan struct{}
	for _, tp := range parts {
		name, ok := c.TopicName(tp.TopicID)
		if !ok {
			continue
		}
		p, ok := c.broker.Partition(name, tp.Partition)
		if !ok {
			continue
		}
		chans = append(chans, p.HighWatermarkChanged())
		if sp := c.parts.Lookup(share.PartitionKey{Group: groupID, TopicPartition: tp}); sp != nil {
			if d, ok := sp.NextLockDeadline(); ok && (until.IsZero() || d.Before(until)) {
				until = d
			}
		}
	}
	return until, chans
}

// ReleaseMember gives a member's acquired records back to its group and
// makes that durable.
func (c *Coordinator) ReleaseMember(groupID, member string) {
	c.parts.ReleaseMember(groupID, member)
	c.PersistGroup(groupID)
}
