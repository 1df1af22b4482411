package tests

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/hooks/hookstest"
)

// BenchmarkExtInterceptorFetch is franz-go consume throughput of 1 KiB
// JSON records from 6 partitions without a fetch interceptor (zero-copy)
// and through the masking example (one field masked in every record), in
// alternating rounds; each round reads a topic of fetchBenchRecords
// records from the start with a new consumer.
func BenchmarkExtInterceptorFetch(b *testing.B) {
	mask := hookstest.BuildGo(b, "../examples/interceptor-mask")
	br := startExtBroker(b, fmt.Sprintf("[log]\ndurability = \"page_cache\"\n\n[extensions.mask]\nkind = \"interceptor\"\nwasm = %q\nconfig = { fields = [\"ssn\"] }\n", mask))
	ic := "mask"
	createTopic(b, br.Kafka, "plain", 6, nil)
	createTopic(b, br.Kafka, "masked", 6, map[string]*string{"gregor.interceptor.fetch": &ic})
	value := fmt.Appendf(nil, `{"id":"c-1","ssn":"123-45-6789","note":"%s"}`, bytes.Repeat([]byte("x"), 1024-44))
	const n = 20000
	for _, topic := range []string{"plain", "masked"} {
		cl := benchProducer(b, br.Kafka, topic)
		ctx := context.Background()
		for i := range n {
			cl.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "c-%d", i), Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					b.Error(err)
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	round := func(topic string) time.Duration {
		cl, err := kgo.NewClient(kgo.SeedBrokers(br.Kafka), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		for got := 0; got < n; {
			fs := cl.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				b.Fatalf("consume %s: %v", topic, err)
			}
			got += fs.NumRecords()
		}
		return time.Since(start)
	}
	var offTime, onTime time.Duration
	b.SetBytes(2 * n * int64(len(value)))
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			offTime += round("plain")
			onTime += round("masked")
		} else {
			onTime += round("masked")
			offTime += round("plain")
		}
	}
	b.ReportMetric(float64(b.N*n)/offTime.Seconds(), "records/s-none")
	b.ReportMetric(float64(b.N*n)/onTime.Seconds(), "records/s-mask")
	b.ReportMetric(offTime.Seconds()/onTime.Seconds(), "ratio")
}
