package tests

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkExtInterceptorProduce is franz-go produce throughput of 1 KiB
// JSON records to 6 partitions without an interceptor and through the
// JSON Schema example under the default time limit, in alternating rounds
// (the machine's load moves both alike).
func BenchmarkExtInterceptorProduce(b *testing.B) {
	validator := hookstest.BuildGo(b, "../examples/interceptor-jsonschema")
	schema := `{"type": "object", "required": ["id", "qty"], "properties": {"id": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}, "note": {"type": "string"}}}`
	br := startExtBroker(b, fmt.Sprintf("[log]\ndurability = \"page_cache\"\n\n[extensions.schema]\nkind = \"interceptor\"\nwasm = %q\nconfig = { schema = %q }\n", validator, schema))
	ic := "schema"
	createTopic(b, br.Kafka, "plain", 6, nil)
	createTopic(b, br.Kafka, "validated", 6, map[string]*string{"gregor.interceptor.produce": &ic})
	value := fmt.Appendf(nil, `{"id":"o-1","qty":3,"note":"%s"}`, bytes.Repeat([]byte("x"), 1024-30))
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "customer-%08d", i)
	}
	off, on := benchProducer(b, br.Kafka, "plain"), benchProducer(b, br.Kafka, "validated")
	round := func(cl *kgo.Client, n int) time.Duration {
		ctx := context.Background()
		errs := make(chan error, 1)
		start := time.Now()
		for i := range n {
			cl.Produce(ctx, &kgo.Record{Key: keys[i%len(keys)], Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		select {
		case err := <-errs:
			b.Fatalf("produce: %v", err)
		default:
		}
		return time.Since(start)
	}
	const per = 2000
	var offTime, onTime time.Duration
	b.SetBytes(2 * int64(len(value)))
	b.ResetTimer()
	for done, r := 0, 0; done < b.N; done, r = done+per, r+1 {
		n := min(per, b.N-done)
		if r%2 == 0 {
			offTime += round(off, n)
			onTime += round(on, n)
		} else {
			onTime += round(on, n)
			offTime += round(off, n)
		}
	}
	b.ReportMetric(float64(b.N)/offTime.Seconds(), "records/s-none")
	b.ReportMetric(float64(b.N)/onTime.Seconds(), "records/s-jsonschema")
	b.ReportMetric(offTime.Seconds()/onTime.Seconds(), "ratio")
}
