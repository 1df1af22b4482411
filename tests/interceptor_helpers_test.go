package tests

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/gregorbroker/gregor/core/record"
)

// rawProduce sends one Produce v9 request (by topic name: kgo sends the
// highest version both sides speak, so the client is capped at Kafka 2.8's
// versions) with one uncompressed batch of values to partition 0, and
// returns the partition's answer, with its error message and record
// errors, which kgo's producer does not surface.
func rawProduce(t *testing.T, ctx context.Context, addr, topic string, values ...string) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	recs := make([]record.Record, len(values))
	for i, v := range values {
		recs[i] = record.Record{Value: []byte(v)}
	}
	batch, err := record.Encode(record.BatchSpec{FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(kversion.V2_8_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0]
}

// rawProduceMessage is the error message of a raw produce of one record.
func rawProduceMessage(t *testing.T, ctx context.Context, addr, topic string) string {
	t.Helper()
	sp := rawProduce(t, ctx, addr, topic, "x")
	if sp.ErrorMessage == nil {
		return ""
	}
	return *sp.ErrorMessage
}
