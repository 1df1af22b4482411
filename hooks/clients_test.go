package hooks_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/clients/franzgo"
	"github.com/gregorbroker/gregor/sdk/clients/kafkago"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

func loadForClient(t *testing.T, dir, rel string, o hooks.Options) *hooks.Partitioner {
	t.Helper()
	var path string
	if rel == "" {
		path = hookstest.BuildGo(t, dir)
	} else {
		path = hookstest.BuildAssemblyScript(t, dir, rel)
	}
	ctx := context.Background()
	p, err := hooks.LoadPartitioner(ctx, path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return p
}

// TestClientAdaptersAgreeWithBuiltin: the AssemblyScript murmur2 module inside a
// kafka-go Balancer and a franz-go Partitioner places keys as Kafka's
// default partitioner does.
func TestClientAdaptersAgreeWithBuiltin(t *testing.T) {
	p := loadForClient(t, "../examples/wasm-murmur2-as", "build/murmur2.wasm", hooks.Options{})
	bal := kafkago.NewBalancer(p)
	tp := franzgo.NewPartitioner(p).ForTopic("orders")
	for n := 1; n <= 16; n++ {
		parts := make([]int, n)
		for i := range parts {
			parts[i] = 100 + i // kafka-go passes partition ids; the balancer returns one of them
		}
		for i := 0; i < 300; i++ {
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

// TestClientAdaptersPassHeaders: the region example routes by header through
// both adapters.
func TestClientAdaptersPassHeaders(t *testing.T) {
	p := loadForClient(t, "../examples/wasm-region", "", hooks.Options{})
	bal := kafkago.NewBalancer(p)
	tp := franzgo.NewPartitioner(p).ForTopic("orders")
	parts := make([]int, 12)
	for i := range parts {
		parts[i] = i
	}
	for i := 0; i < 100; i++ {
		key := []byte(fmt.Sprint("k", i))
		if got := bal.Balance(kafka.Message{Key: key, Headers: []kafka.Header{{Key: "region", Value: []byte("us")}}}, parts...); got < 4 || got >= 8 {
			t.Fatalf("kafka-go: us record on %d", got)
		}
		if got := tp.Partition(&kgo.Record{Key: key, Headers: []kgo.RecordHeader{{Key: "region", Value: []byte("ap")}}}, 12); got < 8 {
			t.Fatalf("franz-go: ap record on %d", got)
		}
	}
}

// TestClientAdaptersFallBack: a failing module reports the error and the record
// is placed by Kafka's rule.
func TestClientAdaptersFallBack(t *testing.T) {
	p := loadForClient(t, "testdata/murmur", "", hooks.Options{Config: []byte(`{"mode":"range"}`)})
	var errs int
	bal := kafkago.NewBalancer(p)
	bal.OnError = func(error) { errs++ }
	fp := franzgo.NewPartitioner(p)
	fp.OnError = func(error) { errs++ }
	key := []byte("21")
	want := int(partitioner.KeyPartition(key, 5))
	if got := bal.Balance(kafka.Message{Key: key}, 0, 1, 2, 3, 4); got != want {
		t.Fatalf("kafka-go fallback: %d want %d", got, want)
	}
	if got := fp.ForTopic("t").Partition(&kgo.Record{Key: key}, 5); got != want {
		t.Fatalf("franz-go fallback: %d want %d", got, want)
	}
	if errs != 2 {
		t.Fatalf("%d errors reported, want 2", errs)
	}
}
