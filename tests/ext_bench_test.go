package tests

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/plugins"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// Benchmarks of `make bench-plugins` that need a broker or a plugin
// process; the per-record cost of the built-in and WASM partitioners is
// BenchmarkPartitioner in hooks.

// benchValue is the 1 KiB value of every benchmark record.
var benchValue = bytes.Repeat([]byte("v"), 1024)

// BenchmarkExtPluginPartitioner is the cost of a go-plugin partitioner
// (gRPC to a child process) per call, for batches of 1 and 100 records.
func BenchmarkExtPluginPartitioner(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "testplugin")
	build := exec.Command(hookstest.GoTool(), "build", "-o", bin, "./plugins/testdata/testplugin")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build testplugin: %v\n%s", err, out)
	}
	p, err := plugins.OpenPartitioner(plugins.Config{Name: "bench", Kind: config.KindPartitioner, Path: bin})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			recs := make([]partitioner.Record, batch)
			for i := range recs {
				recs[i] = partitioner.Record{Key: fmt.Appendf(nil, "customer-%08d", i), Value: benchValue}
			}
			out := make([]int32, batch)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := p.PartitionBatch(recs, 64, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/call")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/record")
		})
	}
}

// benchBroker starts a broker (acknowledging from the page cache) with the
// AssemblyScript murmur2 and the Go region partitioners declared, and
// topics placed by the built-in and by each module, with and without the
// placement check.
func benchBroker(b *testing.B) *extBroker {
	b.Helper()
	as := hookstest.BuildAssemblyScript(b, "../examples/wasm-murmur2-as", "build/murmur2.wasm")
	region := hookstest.BuildGo(b, "../examples/wasm-region")
	// page_cache: an fsync per request would hide the partitioner's and
	// the placement check's cost on this path.
	br := startExtBroker(b, fmt.Sprintf(`[log]
durability = "page_cache"

[extensions.murmur2as]
kind = "partitioner"
wasm = %q

[extensions.region]
kind = "partitioner"
wasm = %q
`, as, region))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	on := "true"
	topics := map[string]map[string]*string{
		"builtin":         nil,
		"wasm-as":         {"gregor.partitioner": strp("murmur2as")},
		"wasm-go":         {"gregor.partitioner": strp("region")},
		"enforce-builtin": {"gregor.partitioner.enforce": &on},
		"enforce-wasm-as": {"gregor.partitioner": strp("murmur2as"), "gregor.partitioner.enforce": &on},
	}
	adm := newAdmin(b, br.Kafka)
	for topic, configs := range topics {
		if _, err := adm.CreateTopic(ctx, 12, 1, configs, topic); err != nil {
			b.Fatal(err)
		}
	}
	return br
}

func strp(s string) *string { return &s }

// BenchmarkExtHTTPProduce is produce-over-HTTP throughput (requests of 100
// keyed 1 KiB records, binary format) with the topic placed by the
// built-in murmur2 or by a WASM partitioner.
func BenchmarkExtHTTPProduce(b *testing.B) {
	br := benchBroker(b)
	const perRequest = 100
	type rec struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	var body struct {
		Records []rec `json:"records"`
	}
	v := base64.StdEncoding.EncodeToString(benchValue)
	for i := range perRequest {
		body.Records = append(body.Records, rec{Key: base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "customer-%08d", i)), Value: v})
	}
	raw, err := json.Marshal(body)
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, topic := range []string{"builtin", "wasm-as", "wasm-go"} {
		b.Run(topic, func(b *testing.B) {
			url := "http://" + br.HTTP + "/topics/" + topic
			b.SetBytes(perRequest * int64(len(benchValue)))
			b.ResetTimer()
			for range b.N {
				resp, err := client.Post(url, "application/vnd.kafka.binary.v2+json", bytes.NewReader(raw))
				if err != nil {
					b.Fatal(err)
				}
				text, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || bytes.Contains(text, []byte(`"error_code":`)) && !bytes.Contains(text, []byte(`"error_code":null`)) {
					b.Fatalf("produce: %d %s", resp.StatusCode, text)
				}
			}
			b.ReportMetric(float64(b.N*perRequest)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkExtPlacementCheck is the cost of the placement check
// (gregor.partitioner.enforce=true) on franz-go produce of keyed,
// uncompressed 1 KiB records, for the built-in murmur2 and the
// AssemblyScript murmur2 module (which place alike). The same client
// settings write to a topic without and one with the check, alternating in
// rounds so both see the same machine noise; it reports both throughputs
// and the check's cost in percent.
func BenchmarkExtPlacementCheck(b *testing.B) {
	br := benchBroker(b)
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "customer-%08d", i)
	}
	for _, pair := range []struct{ name, off, on string }{
		{"builtin", "builtin", "enforce-builtin"},
		{"wasm-as", "wasm-as", "enforce-wasm-as"},
	} {
		b.Run(pair.name, func(b *testing.B) {
			off, on := benchProducer(b, br.Kafka, pair.off), benchProducer(b, br.Kafka, pair.on)
			const round = 2000
			var offTime, onTime time.Duration
			b.SetBytes(2 * int64(len(benchValue))) // one record to each topic
			b.ResetTimer()
			for done, r := 0, 0; done < b.N; done, r = done+round, r+1 {
				n := min(round, b.N-done)
				if r%2 == 0 {
					offTime += produceRound(b, off, keys, n)
					onTime += produceRound(b, on, keys, n)
				} else {
					onTime += produceRound(b, on, keys, n)
					offTime += produceRound(b, off, keys, n)
				}
			}
			b.ReportMetric(float64(b.N)/offTime.Seconds(), "records/s-off")
			b.ReportMetric(float64(b.N)/onTime.Seconds(), "records/s-enforce")
			b.ReportMetric(100*(onTime.Seconds()-offTime.Seconds())/offTime.Seconds(), "%cost")
		})
	}
}

func benchProducer(b *testing.B, addr, topic string) *kgo.Client {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.Close)
	return cl
}

// produceRound writes n records through cl, waits for all of them and
// returns how long that took.
func produceRound(b *testing.B, cl *kgo.Client, keys [][]byte, n int) time.Duration {
	ctx := context.Background()
	errs := make(chan error, 1)
	report := func(_ *kgo.Record, err error) {
		if err != nil {
			select {
			case errs <- err:
			default:
			}
		}
	}
	start := time.Now()
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Key: keys[i%len(keys)], Value: benchValue}, report)
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	select {
	case err := <-errs:
		b.Fatalf("produce: %v", err)
	default:
	}
	return took
}

// BenchmarkExtPlacementCheckCPU is the broker-side CPU the placement check
// adds per record, measured apart from the network and the client (which
// make BenchmarkExtPlacementCheck noisy on a shared machine): one Check of
// a produce batch of 16 uncompressed keyed 1 KiB records, with the
// built-in murmur2 and with the AssemblyScript murmur2 module.
func BenchmarkExtPlacementCheckCPU(b *testing.B) {
	ctx := context.Background()
	as, err := hooks.LoadPartitioner(ctx, hookstest.BuildAssemblyScript(b, "../examples/wasm-murmur2-as", "build/murmur2.wasm"), hooks.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer as.Close(ctx)
	cfg := config.Default()
	cfg.Extensions = map[string]config.Extension{"murmur2as": {Kind: config.KindPartitioner, WASM: "unused"}}
	set, err := extension.NewSet(&cfg, map[string]partitioner.BatchPartitioner{"murmur2as": as}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	wasmAS, err := set.TopicPartitioner(map[string]string{"gregor.partitioner": "murmur2as"})
	if err != nil {
		b.Fatal(err)
	}
	const parts, perBatch = int32(12), 16
	var recs []record.Record
	for i := 0; len(recs) < perBatch; i++ {
		k := fmt.Appendf(nil, "customer-%08d", i)
		if partitioner.KeyPartition(k, parts) == 3 {
			recs = append(recs, record.Record{Key: k, Value: benchValue})
		}
	}
	batch, err := record.Encode(record.BatchSpec{FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    *extension.Partitioner
	}{{"builtin", extension.Murmur2()}, {"wasm-as", wasmAS}} {
		b.Run(tc.name, func(b *testing.B) {
			var c extension.Placement
			c.MaxDecompressed = 1 << 20
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for range b.N {
				if err := c.Check(tc.p, batch, 3, parts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perBatch), "ns/record")
		})
	}
}
