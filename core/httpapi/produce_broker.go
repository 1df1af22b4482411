package httpapi

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/gregorbroker/gregor/core/broker"
	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/record"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// BrokerProducer is produce over HTTP on this broker's partitions. It asks
// core/broker for the partition and the produce policy, as Kafka Produce
// does: the mirror-link rule, the placement check and the interceptor.
type BrokerProducer struct {
	Broker *broker.Broker
	// Authorize refuses (with an error wrapping ErrNotAuthorized) a
	// principal that may not write to topic; nil allows every write.
	Authorize func(ctx context.Context, principal sdkauth.Principal, topic string) error
	// ErrorCode is the Kafka error code of an append error, as Kafka
	// Produce answers it.
	ErrorCode func(error) int16
}

var _ Producer = (*BrokerProducer)(nil)

// ProduceRecords implements Producer: records without a partition are
// placed by the topic's partitioner (one call for the request), each
// partition's records are appended as one batch with acks=1 semantics (and
// fsynced when durability is fsync), and the placement check applies as
// for a Kafka producer.
func (bp *BrokerProducer) ProduceRecords(ctx context.Context, topic string, recs []ProduceRecord) ([]ProduceResult, error) {
	b := bp.Broker
	im := b.Controller.Image()
	t, ok := im.Topic(topic)
	if !ok || t.Internal {
		return nil, ErrTopicNotFound
	}
	if bp.Authorize != nil {
		// The producer is the principal the HTTP listener authenticated
		// (User:ANONYMOUS without credentials).
		if err := bp.Authorize(ctx, Principal(ctx), topic); err != nil {
			return nil, err
		}
	}
	n := int32(len(t.Partitions))
	results := make([]ProduceResult, len(recs))
	var unplaced []int
	for i, r := range recs {
		if r.Partition >= n {
			return nil, fmt.Errorf("%w: partition %d of topic %s, which has %d", ErrPartitionNotFound, r.Partition, topic, n)
		}
		results[i].Partition = r.Partition
		if r.Partition < 0 {
			unplaced = append(unplaced, i)
		}
	}
	if len(unplaced) > 0 {
		p, err := b.TopicPartitioner(im, topic)
		if err != nil {
			return nil, err
		}
		in := make([]partitioner.Record, len(unplaced))
		for j, i := range unplaced {
			in[j] = partitioner.Record{Key: recs[i].Key, Value: recs[i].Value}
			if hs := recs[i].Headers; len(hs) > 0 {
				in[j].Headers = make([]partitioner.Header, len(hs))
				for k, h := range hs {
					in[j].Headers[k] = partitioner.Header{Key: h.Key, Value: h.Value}
				}
			}
		}
		out := make([]int32, len(in))
		if err := p.PartitionBatch(in, n, out); err != nil {
			return nil, fmt.Errorf("httpapi: produce over HTTP to %s: %w", topic, err)
		}
		for j, i := range unplaced {
			results[i].Partition = out[j]
		}
	}
	byPartition := map[int32][]int{}
	for i := range recs {
		byPartition[results[i].Partition] = append(byPartition[results[i].Partition], i)
	}
	parts := make([]int32, 0, len(byPartition))
	for p := range byPartition {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, part := range parts {
		idx := byPartition[part]
		base, code, err := bp.appendBatch(ctx, im, topic, part, recs, idx)
		for j, i := range idx {
			if code != 0 {
				results[i].ErrorCode, results[i].Err = code, err
				if ke, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
					results[i].Retriable = ke.Retriable
					if err == nil {
						results[i].Err = ke
					}
				}
				continue
			}
			results[i].Offset = base + int64(j)
		}
	}
	return results, ctx.Err()
}

// appendBatch appends records idx of recs to one partition as one batch.
func (bp *BrokerProducer) appendBatch(ctx context.Context, im *controller.Image, topic string, part int32, recs []ProduceRecord, idx []int) (int64, int16, error) {
	b := bp.Broker
	p, ok := b.Partition(topic, part)
	if !ok {
		return 0, kerr.UnknownTopicOrPartition.Code, nil
	}
	if !b.Leads(p) {
		return 0, kerr.NotLeaderForPartition.Code, nil
	}
	batchRecs := make([]record.Record, len(idx))
	for j, i := range idx {
		batchRecs[j] = record.Record{Key: recs[i].Key, Value: recs[i].Value}
		if hs := recs[i].Headers; len(hs) > 0 {
			batchRecs[j].Headers = make([]record.RecordHeader, len(hs))
			for k, h := range hs {
				batchRecs[j].Headers[k] = record.RecordHeader{Key: h.Key, Value: h.Value}
			}
		}
	}
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	batch, err := record.Encode(record.BatchSpec{FirstTimestamp: now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, batchRecs)
	if err != nil {
		return 0, kerr.InvalidRecord.Code, err
	}
	if code, err := broker.CheckMirrorLink(im, topic, "", false); code != 0 {
		return 0, code, err // a mirror link's topic is read-only
	}
	batch, checked, code, err := b.CheckProduced(ctx, im, p, topic, part, batch, Principal(ctx))
	if code == 0 && err != nil {
		code = bp.errorCode(err) // the record set failed validation
	}
	if code != 0 {
		return 0, code, err
	}
	if checked.IsZero() {
		if checked, err = p.Check(batch, nil, 0); err != nil {
			return 0, bp.errorCode(err), err
		}
	}
	res, err := p.AppendChecked(checked)
	if err != nil {
		return 0, bp.errorCode(err), err
	}
	if b.Config.Log.Durability == config.DurabilityFsync {
		if err := p.Sync(); err != nil {
			return 0, kerr.KafkaStorageError.Code, err
		}
	}
	return res.BaseOffset, 0, nil
}

func (bp *BrokerProducer) errorCode(err error) int16 {
	if bp.ErrorCode == nil {
		return kerr.UnknownServerError.Code
	}
	return bp.ErrorCode(err)
}

// Principal is the principal the HTTP listener authenticated
// (User:ANONYMOUS without credentials).
func Principal(ctx context.Context) sdkauth.Principal {
	if ps, ok := RequestPrincipal(ctx); ok {
		if p, err := sdkauth.ParsePrincipal(ps); err == nil {
			return p
		}
	}
	return sdkauth.Anonymous
}
