package clients_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/sdk/clients/franzgo"
	"github.com/gregorbroker/gregor/sdk/clients/kafkago"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// byHeader places a record on the partition its "p" header names, and
// fails when a record has none.
type byHeader struct{}

func (byHeader) PartitionBatch(records []partitioner.Record, n int32, out []int32) error {
	for i, r := range records {
		if len(r.Headers) == 0 || r.Headers[0].Key != "p" {
			return errors.New("no p header")
		}
		out[i] = int32(r.Headers[0].Value[0]-'0') % n
	}
	return nil
}

// TestAdaptersAgreeWithBuiltin: the sdk's murmur2 inside a kafka-go
// Balancer and a franz-go Partitioner places keys as Kafka's default
// partitioner does, and kafka-go gets one of the partition ids it passed.
func TestAdaptersAgreeWithBuiltin(t *testing.T) {
	var m partitioner.Murmur2Batch
	bal := kafkago.NewBalancer(&m)
	tp := franzgo.NewPartitioner(&m).ForTopic("orders")
	for n := 1; n <= 16; n++ {
		parts := make([]int, n)
		for i := range parts {
			parts[i] = 100 + i
		}
		for i := 0; i < 100; i++ {
			key := []byte(fmt.Sprint("customer-", i))
			want := int(partitioner.KeyPartition(key, int32(n)))
			if got := bal.Balance(kafka.Message{Key: key}, parts...); got != 100+want {
				t.Fatalf("kafka-go, %d partitions, key %s: %d, want %d", n, key, got, 100+want)
			}
			r := &kgo.Record{Key: key}
			if !tp.RequiresConsistency(r) {
				t.Fatal("keyed placement must be consistent")
			}
			if got := tp.Partition(r, n); got != want {
				t.Fatalf("franz-go, %d partitions, key %s: %d, want %d", n, key, got, want)
			}
		}
	}
}

// TestAdaptersPassHeadersAndFallBack: headers reach the partitioner; a
// failing call is reported and the record goes by Kafka's rule.
func TestAdaptersPassHeadersAndFallBack(t *testing.T) {
	var errs int
	bal := kafkago.NewBalancer(byHeader{})
	bal.OnError = func(error) { errs++ }
	fp := franzgo.NewPartitioner(byHeader{})
	fp.OnError = func(error) { errs++ }
	tp := fp.ForTopic("t")
	if got := bal.Balance(kafka.Message{Key: []byte("k"), Headers: []kafka.Header{{Key: "p", Value: []byte("3")}}}, 0, 1, 2, 3, 4); got != 3 {
		t.Fatalf("kafka-go: %d, want 3", got)
	}
	if got := tp.Partition(&kgo.Record{Key: []byte("k"), Headers: []kgo.RecordHeader{{Key: "p", Value: []byte("2")}}}, 5); got != 2 {
		t.Fatalf("franz-go: %d, want 2", got)
	}
	if errs != 0 {
		t.Fatalf("%d errors reported, want 0", errs)
	}
	key := []byte("21")
	want := int(partitioner.KeyPartition(key, 5))
	if got := bal.Balance(kafka.Message{Key: key}, 0, 1, 2, 3, 4); got != want {
		t.Fatalf("kafka-go fallback: %d want %d", got, want)
	}
	if got := tp.Partition(&kgo.Record{Key: key}, 5); got != want {
		t.Fatalf("franz-go fallback: %d want %d", got, want)
	}
	if errs != 2 {
		t.Fatalf("%d errors reported, want 2", errs)
	}
}
