package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/record"
)

// A compressed batch produced to a compacted topic with the placement
// check is decompressed once: the pass that validates it for the append
// also checks its keys and hands its records to the placement check.
func TestProduceDecompressesOnce(t *testing.T) {
	b := startExtBroker(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	compact, enforce := "compact", "true"
	const topic = "placed-compacted"
	if _, err := newAdmin(t, b.Kafka).CreateTopic(ctx, 1, 1,
		map[string]*string{"cleanup.policy": &compact, "gregor.partitioner.enforce": &enforce}, topic); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Kafka), kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(recs []*kgo.Record) {
		t.Helper()
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	batch := func(n int) []*kgo.Record {
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("key-%d", i)), Value: []byte("a value that compresses well, well, well")}
		}
		return recs
	}
	produce(batch(1)) // metadata and producer id are settled
	before := record.Decompressions()
	produce(batch(20))
	if got := record.Decompressions() - before; got != 1 {
		t.Fatalf("a produced zstd batch was decompressed %d times, want once", got)
	}
}
