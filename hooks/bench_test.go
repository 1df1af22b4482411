package hooks

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// benchRecords is a batch of keyed 1 KiB records, as a producer sends.
func benchRecords(n int) []partitioner.Record {
	recs := make([]partitioner.Record, n)
	value := make([]byte, 1024)
	for i := range recs {
		recs[i] = partitioner.Record{Key: []byte(fmt.Sprintf("customer-%08d", i)), Value: value}
	}
	return recs
}

// runPartitionBench reports ns/record for batches of size batch.
func runPartitionBench(b *testing.B, bp partitioner.BatchPartitioner, batch int) {
	recs := benchRecords(batch)
	out := make([]int32, batch)
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	cpu := threadCPU()
	for i := 0; i < b.N; i++ {
		if err := bp.PartitionBatch(recs, 64, out); err != nil {
			b.Fatal(err)
		}
	}
	reportPerRecord(b, threadCPU()-cpu, b.N*batch)
}

// reportPerRecord reports wall and thread CPU time per record.
func reportPerRecord(b *testing.B, cpu time.Duration, records int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(records), "cpu-ns/record")
	}
}

func BenchmarkPartitioner(b *testing.B) {
	ctx := context.Background()
	goGuest, err := LoadPartitioner(ctx, hookstest.BuildGo(b, "testdata/murmur"), Options{Trusted: true})
	if err != nil {
		b.Fatal(err)
	}
	defer goGuest.Close(ctx)
	limited, err := LoadPartitioner(ctx, hookstest.BuildGo(b, "testdata/murmur"), Options{}) // the default limit
	if err != nil {
		b.Fatal(err)
	}
	defer limited.Close(ctx)
	refGuest, err := LoadPartitioner(ctx, hookstest.BuildGo(b, "testdata/murmurref"), Options{Trusted: true})
	if err != nil {
		b.Fatal(err)
	}
	defer refGuest.Close(ctx)
	batchGuest, err := LoadPartitioner(ctx, hookstest.BuildGo(b, "testdata/murmurbatch"), Options{Trusted: true})
	if err != nil {
		b.Fatal(err)
	}
	defer batchGuest.Close(ctx)
	batchLimited, err := LoadPartitioner(ctx, batchGuest.Module().Path(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer batchLimited.Close(ctx)
	asGuest, err := LoadPartitioner(ctx, hookstest.BuildAssemblyScript(b, "../examples/wasm-murmur2-as", "build/murmur2.wasm"), Options{Trusted: true})
	if err != nil {
		b.Fatal(err)
	}
	defer asGuest.Close(ctx)
	asLimited, err := LoadPartitioner(ctx, asGuest.Module().Path(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer asLimited.Close(ctx)
	for _, batch := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("builtin/batch=%d", batch), func(b *testing.B) { runPartitionBench(b, &partitioner.Murmur2Batch{}, batch) })
		b.Run(fmt.Sprintf("wasm-go/batch=%d", batch), func(b *testing.B) { runPartitionBench(b, goGuest, batch) })
		b.Run(fmt.Sprintf("wasm-go-ref/batch=%d", batch), func(b *testing.B) { runPartitionBench(b, refGuest, batch) })
		b.Run(fmt.Sprintf("wasm-go-timeout/batch=%d", batch), func(b *testing.B) { runPartitionBench(b, limited, batch) })
		b.Run(fmt.Sprintf("wasm-go-batch/batch=%d", batch), func(b *testing.B) { runPartitionBench(b, batchGuest, batch) })
		b.Run(fmt.Sprintf("wasm-go-batch-timeout/batch=%d", batch), func(b *testing.B) { runPartitionBench(b, batchLimited, batch) })
		b.Run(fmt.Sprintf("wasm-as/batch=%d", batch), func(b *testing.B) { runPartitionBench(b, asGuest, batch) })
		b.Run(fmt.Sprintf("wasm-as-timeout/batch=%d", batch), func(b *testing.B) { runPartitionBench(b, asLimited, batch) })
	}
}

// BenchmarkInterceptor reports ns/record of a produce interceptor in
// batches of 100 1 KiB JSON records: a no-op Go guest and the JSON Schema
// example, trusted and under the default time limit.
func BenchmarkInterceptor(b *testing.B) {
	ctx := context.Background()
	schema := []byte(`{"schema": {"type": "object", "required": ["id", "qty"], "properties": {"id": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}, "note": {"type": "string"}}}}`)
	noop := hookstest.BuildGo(b, "testdata/intercept")
	validator := hookstest.BuildGo(b, "../examples/interceptor-jsonschema")
	value := []byte(fmt.Sprintf(`{"id":"o-1","qty":3,"note":"%s"}`, bytes.Repeat([]byte("x"), 1024-30)))
	const batch = 100
	recs := make([]interceptor.Record, batch)
	for i := range recs {
		recs[i] = interceptor.Record{Key: []byte(fmt.Sprintf("customer-%08d", i)), Value: value, OffsetDelta: int32(i)}
	}
	for _, tc := range []struct {
		name, path string
		config     []byte
		trusted    bool
	}{
		{"noop", noop, []byte(`{"mode":"accept"}`), true},
		{"noop-timeout", noop, []byte(`{"mode":"accept"}`), false},
		{"jsonschema", validator, schema, true},
		{"jsonschema-timeout", validator, schema, false},
	} {
		ic, err := LoadInterceptor(ctx, tc.path, Options{Config: tc.config, Trusted: tc.trusted})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			bt := &interceptor.Batch{Topic: "orders", Records: recs}
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := threadCPU()
			for b.Loop() {
				d, err := ic.InterceptProduce(ctx, bt)
				if err != nil || d.Action != interceptor.Accept {
					b.Fatalf("%+v, %v", d, err)
				}
			}
			reportPerRecord(b, threadCPU()-cpu, b.N*batch)
		})
		ic.Close(ctx)
	}
}
