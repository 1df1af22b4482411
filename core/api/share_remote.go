package api

import (
	"bytes"
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/core/replication"
	"github.com/gregorbroker/gregor/core/share"
)

// persistRemoteShareState writes a share state batch to the broker
// leading its __share_group_state partition with acks=all: the write is
// acknowledged once that partition's ISR has it.
func (b *Broker) persistRemoteShareState(k share.PartitionKey, batch []byte) error {
	idx, leader, err := b.shareStateLeader(k)
	if err != nil {
		return err
	}
	return b.withPeer(leader, replication.ChannelShareState, func(ctx context.Context, cl kmsg.Requestor) error {
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 30000
		rt := kmsg.NewProduceRequestTopic()
		// The client picks the version: name and id both, for either.
		rt.Topic, rt.TopicID = share.StateTopic, b.shareStateTopicID()
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = idx, batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return fmt.Errorf("writing share state: %w", err)
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return fmt.Errorf("writing share state to %s-%d: %w", share.StateTopic, idx, err)
				}
			}
		}
		return nil
	})
}

// loadRemoteShareState reads k's last snapshot from the broker leading its
// __share_group_state partition, fetching from the log start to the high
// watermark.
func (b *Broker) loadRemoteShareState(k share.PartitionKey) (share.Snapshot, bool, error) {
	idx, leader, err := b.shareStateLeader(k)
	if err != nil {
		return share.Snapshot{}, false, err
	}
	key := share.EncodeSnapshotKey(k)
	var last []byte
	found := false
	err = b.withPeer(leader, replication.ChannelShareState, func(ctx context.Context, cl kmsg.Requestor) error {
		offset := int64(0)
		for {
			req := kmsg.NewPtrFetchRequest()
			req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = -1, 0, 16<<20
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = share.StateTopic, b.shareStateTopicID()
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.LogStartOffset = idx, offset, 16<<20, -1
			rp.CurrentLeaderEpoch = -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return fmt.Errorf("reading share state: %w", err)
			}
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				return fmt.Errorf("reading share state: %w: answer without the partition", errShareStateUnavailable)
			}
			p := resp.Topics[0].Partitions[0]
			if p.ErrorCode == kerr.OffsetOutOfRange.Code && offset < p.LogStartOffset {
				offset = p.LogStartOffset
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("reading %s-%d: %w", share.StateTopic, idx, err)
			}
			next := offset
			for it := record.Batches(p.RecordBatches); it.Next(); {
				h := it.Header()
				next = h.NextOffset()
				if h.IsControl() {
					continue
				}
				err := record.Records(it.Batch(), 16<<20, func(r record.Record) error {
					if bytes.Equal(r.Key, key) {
						last, found = r.Value, true
					}
					return nil
				})
				if err != nil {
					return fmt.Errorf("reading %s-%d: %w", share.StateTopic, idx, err)
				}
			}
			if next == offset || next >= p.HighWatermark {
				return nil
			}
			offset = next
		}
	})
	if err != nil || !found || last == nil {
		return share.Snapshot{}, false, err
	}
	_, s, err := share.DecodeSnapshotValue(last)
	if err != nil {
		return share.Snapshot{}, false, err
	}
	return s, true, nil
}

func (b *Broker) shareStateTopicID() [16]byte {
	if t, ok := b.Controller.Image().Topic(share.StateTopic); ok {
		return t.ID
	}
	return [16]byte{}
}
