package api

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/partition"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/core/share"
)

// shareAck is one acknowledgement batch of ShareFetch or ShareAcknowledge.
type shareAck struct {
	first, last int64
	types       []share.AckType
}

// sharePartResult is what one partition of a ShareFetch or
// ShareAcknowledge answers.
type sharePartResult struct {
	code, ackCode      int16
	ackMsg             *string
	leader, epoch      int32
	records            []byte
	acquired           []share.AcquiredRange
	lockDuration       time.Duration
	hasAcks, wasLocked bool
}

// localSharePartition finds the share-partition of a partition this broker
// leads; code is the partition error otherwise.
func (b *Broker) localSharePartition(groupID string, tp share.TopicPartition) (*share.Partition, *partition.Partition, int16, int32, int32) {
	name, ok := b.topicNameByID(tp.TopicID)
	if !ok {
		return nil, nil, kerr.UnknownTopicID.Code, -1, -1
	}
	p, ok := b.partition(name, tp.Partition)
	if !ok {
		return nil, nil, kerr.UnknownTopicOrPartition.Code, -1, -1
	}
	leader, epoch := p.Leadership()
	if leader != b.Config.NodeID {
		return nil, nil, kerr.NotLeaderForPartition.Code, leader, epoch
	}
	sp, err := b.sharePartition(groupID, tp, p)
	if err != nil {
		b.Logger.Warn("loading share state", "group", groupID, "partition", tp.Partition, "err", err)
		// Retriable for the client: the state partition is on its way.
		return nil, nil, kerr.NotLeaderForPartition.Code, leader, epoch
	}
	return sp, p, 0, leader, epoch
}

// acknowledgeShare applies a partition's acknowledgements; the first
// failure is the partition's acknowledge error.
func (b *Broker) acknowledgeShare(groupID, member string, tp share.TopicPartition, acks []shareAck) (int16, *string) {
	sp, _, code, _, _ := b.localSharePartition(groupID, tp)
	if code != 0 {
		return code, nil
	}
	var ackErr error
	applied := false
	for _, a := range acks {
		if ackErr = sp.Acknowledge(member, a.first, a.last, a.types); ackErr != nil {
			break
		}
		applied = true
	}
	if applied {
		if err := b.persistShare(share.PartitionKey{Group: groupID, TopicPartition: tp}, sp); err != nil {
			b.Logger.Warn("writing share state", "group", groupID, "partition", tp.Partition, "err", err)
			return kerr.KafkaStorageError.Code, errMessage(err)
		}
	}
	if ackErr != nil {
		return errCode(ackErr), errMessage(ackErr)
	}
	return 0, nil
}

// acquireShare reads from the share-partition's fetch offset and acquires
// for member what it may, up to maxRecords and maxBytes. The record bytes
// returned end with the last batch holding an acquired record.
func (b *Broker) acquireShare(groupID, member string, tp share.TopicPartition, maxRecords int, strict bool, maxBytes int) sharePartResult {
	sp, p, code, leader, epoch := b.localSharePartition(groupID, tp)
	res := sharePartResult{code: code, leader: leader, epoch: epoch}
	if code != 0 {
		return res
	}
	res.lockDuration = sp.LockDuration()
	set := b.shareSettings(groupID)
	for try := 0; try < 2; try++ {
		offset, ok := sp.FetchOffset()
		if !ok {
			return res
		}
		read := p.Read
		if set.readCommitted {
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
			res.code = errCode(err)
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
		opts := share.AcquireOptions{MaxRecords: maxRecords, Strict: strict, ReadCommitted: set.readCommitted}
		for _, a := range rr.Aborted {
			opts.Aborted = append(opts.Aborted, share.AbortedTxn{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset, LastOffset: a.LastOffset})
		}
		res.acquired = sp.Acquire(member, batches, opts)
		if len(res.acquired) == 0 {
			if try == 0 && len(batches) > 0 {
				continue // only archived records (aborted, control): read on
			}
			return res
		}
		// The delivery counts are durable before the records leave.
		if err := b.persistShare(share.PartitionKey{Group: groupID, TopicPartition: tp}, sp); err != nil {
			b.Logger.Warn("writing share state", "group", groupID, "partition", tp.Partition, "err", err)
			// The records never leave: no delivery happened.
			sp.Unacquire(member, res.acquired)
			res.acquired, res.code = nil, kerr.KafkaStorageError.Code
			return res
		}
		last := res.acquired[len(res.acquired)-1].LastOffset
		end := len(rr.Records)
		for i, bi := range batches {
			if bi.LastOffset >= last {
				end = ends[i]
				break
			}
		}
		res.records = rr.Records[:end]
		return res
	}
	return res
}

// shareWaitUntil is when a share fetch that found nothing should look
// again: the earliest acquisition lock deadline among its partitions, or
// never.
func (b *Broker) shareWaitUntil(groupID string, parts []share.TopicPartition) (time.Time, []<-chan struct{}) {
	var until time.Time
	var chans []<-chan struct{}
	for _, tp := range parts {
		name, ok := b.topicNameByID(tp.TopicID)
		if !ok {
			continue
		}
		p, ok := b.partition(name, tp.Partition)
		if !ok {
			continue
		}
		chans = append(chans, p.HighWatermarkChanged())
		if sp := b.share().parts.Lookup(share.PartitionKey{Group: groupID, TopicPartition: tp}); sp != nil {
			if d, ok := sp.NextLockDeadline(); ok && (until.IsZero() || d.Before(until)) {
				until = d
			}
		}
	}
	return until, chans
}
