package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type recordFn func(target, metric, unit, better string, v float64)

func client(bootstrap string, opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.ClientID("gregor-bench-compare")}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	return cl, nil
}

// createTopic creates an unreplicated topic and primes it (createReplicated).
func createTopic(ctx context.Context, bootstrap, topic string, parts int32) error {
	return createReplicated(ctx, bootstrap, topic, parts, 1, nil)
}

// createReplicated creates topic with rf replicas and configs and writes one record to each
// partition, so that the measured runs do not include the broker's leader election of a topic
// created a moment ago.
func createReplicated(ctx context.Context, bootstrap, topic string, parts int32, rf int16, configs map[string]*string) error {
	cl, err := client(bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	r, err := kadm.NewClient(cl).CreateTopic(ctx, parts, rf, configs, topic)
	if err == nil {
		err = r.Err
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	var prime []*kgo.Record
	for p := int32(0); p < parts; p++ {
		prime = append(prime, &kgo.Record{Topic: topic, Partition: p, Value: []byte("prime")})
	}
	if err := cl.ProduceSync(ctx, prime...).FirstErr(); err != nil {
		return fmt.Errorf("prime %s: %w", topic, err)
	}
	return nil
}

// startToFirstProduce polls with one produce every 10 ms from the moment the start script
// returns; the time counts from the process launch the script recorded.
func startToFirstProduce(ctx context.Context, t target) (float64, error) {
	b, err := os.ReadFile(t.startFile)
	if err != nil {
		return 0, err
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", t.startFile, err)
	}
	cl, err := client(t.bootstrap, kgo.AllowAutoTopicCreation(), kgo.RecordRetries(0), kgo.RequestRetries(0))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = cl.ProduceSync(pctx, &kgo.Record{Topic: "bench-first-produce", Value: []byte("x")}).FirstErr()
		cancel()
		if err == nil {
			return float64(time.Now().UnixNano()-ns) / 1e6, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0, fmt.Errorf("no produce succeeded within 2 minutes: %w", err)
}

// payload says what the produced records carry.
type payload int

const (
	// cyclicSnappy: one repeating alphabet value, franz-go's default snappy compression; the
	// batches on the wire and on disk are a small fraction of the record bytes.
	cyclicSnappy payload = iota
	// randomRaw: incompressible random values, no compression; every record byte is sent,
	// written and replicated.
	randomRaw
)

// opts are the client options of the payload.
func (p payload) opts() []kgo.Opt {
	if p == randomRaw {
		return []kgo.Opt{kgo.ProducerBatchCompression(kgo.NoCompression())}
	}
	return nil
}

// values returns k values of size bytes (k distinct random ones for randomRaw, one cyclic
// value otherwise); records take them in turn.
func (p payload) values(size, k int) [][]byte {
	if p == randomRaw {
		rng := rand.New(rand.NewPCG(uint64(size), uint64(k)))
		out := make([][]byte, k)
		for j := range out {
			out[j] = make([]byte, size)
			for i := range out[j] {
				out[j][i] = byte(rng.Uint32())
			}
		}
		return out
	}
	value := make([]byte, size)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	return [][]byte{value}
}

// produceThroughput sends n records of size bytes as fast as the client allows.
func produceThroughput(ctx context.Context, bootstrap, topic string, n, size int, acks kgo.Acks, leaderOnly bool, pl payload) (float64, float64, error) {
	opts := []kgo.Opt{kgo.RequiredAcks(acks), kgo.ProducerLinger(5 * time.Millisecond), kgo.ProducerBatchMaxBytes(1 << 20),
		kgo.MaxBufferedRecords(100000)}
	if leaderOnly { // idempotence requires acks=all
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	cl, err := client(bootstrap, append(opts, pl.opts()...)...)
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	values := pl.values(size, 1024)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	wg.Add(n)
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: values[i%len(values)]}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				firstErr = errors.Join(firstErr, err)
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	if firstErr != nil {
		return 0, 0, firstErr
	}
	return float64(n) / el, float64(n*size) / el / (1 << 20), nil
}

func consumeThroughput(ctx context.Context, bootstrap, topic string, n, size int) (float64, error) {
	cl, err := client(bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(50<<20))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	got := 0
	start := time.Now()
	for got < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("consumed %d of %d: %w", got, n, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return 0, ferr
		}
		got += fs.NumRecords()
	}
	return float64(got*size) / time.Since(start).Seconds() / (1 << 20), nil
}

// latencyAtRate sends records of size bytes at rate per second for d with acks=all and linger 0
// and returns per-record acknowledgement latencies.
func latencyAtRate(ctx context.Context, bootstrap, topic string, size, rate int, d time.Duration, pl payload) ([]time.Duration, error) {
	cl, err := client(bootstrap, append([]kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0)}, pl.opts()...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	values := pl.values(size, 1024)
	n := int(float64(rate) * d.Seconds())
	lats := make([]time.Duration, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	wg.Add(n)
	for i := 0; i < n; i++ {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait) // pacing the offered load, not synchronisation
		}
		sent := time.Now()
		i := i
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: values[i%len(values)]}, func(_ *kgo.Record, err error) {
			lats[i] = time.Since(sent)
			if err != nil {
				mu.Lock()
				firstErr = errors.Join(firstErr, err)
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	return lats, firstErr
}

func hasGroups(bootstrap string) bool {
	cl, err := client(bootstrap)
	if err != nil {
		return false
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		return false
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == 11 { // JoinGroup
			return true
		}
	}
	return false
}

var perfLine = regexp.MustCompile(`([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th`)

// javaProducerPerf runs Kafka's ProducerPerformance and returns records/s, MB/s, p50, p99, p99.9.
func javaProducerPerf(bootstrap, topic string, n, size int, acks string) ([]float64, error) {
	out, err := exec.Command("scripts/kafka-ref.sh", "producer-perf", "--topic", topic, "--num-records", fmt.Sprint(n),
		"--record-size", fmt.Sprint(size), "--throughput", "-1", "--producer-props", "bootstrap.servers="+bootstrap,
		"acks="+acks, "linger.ms=5", "batch.size=262144").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("producer-perf: %w: %s", err, lastLine(string(out)))
	}
	m := perfLine.FindAllStringSubmatch(string(out), -1)
	if len(m) == 0 {
		return nil, fmt.Errorf("producer-perf: no summary line in %q", lastLine(string(out)))
	}
	last := m[len(m)-1]
	var v []float64
	for _, i := range []int{1, 2, 5, 7, 8} {
		f, _ := strconv.ParseFloat(last[i], 64)
		v = append(v, f)
	}
	return v, nil
}

// javaConsumerPerf runs Kafka's ConsumerPerformance (a group consumer) and returns MB/s.
func javaConsumerPerf(bootstrap, topic string, n int) (float64, error) {
	out, err := exec.Command("scripts/kafka-ref.sh", "consumer-perf", "--bootstrap-server", bootstrap, "--topic", topic,
		"--messages", fmt.Sprint(n), "--timeout", "60000", "--hide-header").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("consumer-perf: %w: %s", err, lastLine(string(out)))
	}
	// start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, ...
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, ",")
		if len(f) >= 6 {
			if v, err := strconv.ParseFloat(strings.TrimSpace(f[3]), 64); err == nil {
				return v, nil
			}
		}
	}
	return 0, fmt.Errorf("consumer-perf: no result line in %q", lastLine(string(out)))
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

func measure(t target, o options, record recordFn, notes map[string]string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	ms, err := startToFirstProduce(ctx, t)
	if err != nil {
		return err
	}
	record(t.name, "process start to first acknowledged produce", "ms", "lower", ms)
	scaled := func(n int) int { return max(1000, int(float64(n)*o.scale)) }
	// Warm-up (JIT, page cache, connection setup), not measured.
	if err := createTopic(ctx, t.bootstrap, "bench-warmup", 6); err != nil {
		return err
	}
	if _, _, err := produceThroughput(ctx, t.bootstrap, "bench-warmup", scaled(200_000), 1024, kgo.LeaderAck(), true, cyclicSnappy); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	for _, size := range []int{100, 1024} {
		n := scaled(map[int]int{100: 1_000_000, 1024: 200_000}[size])
		for _, parts := range []int32{1, 6} {
			for _, acks := range []struct {
				name string
				a    kgo.Acks
			}{{"acks=1", kgo.LeaderAck()}, {"acks=all", kgo.AllISRAcks()}} {
				topic := fmt.Sprintf("bench-%d-%d-%s", size, parts, strings.TrimPrefix(acks.name, "acks="))
				if err := createTopic(ctx, t.bootstrap, topic, parts); err != nil {
					return err
				}
				var runs []float64
				for r := 0; r < o.repeat; r++ {
					rps, mbps, err := produceThroughput(ctx, t.bootstrap, topic, n, size, acks.a, acks.name == "acks=1", cyclicSnappy)
					if err != nil {
						return fmt.Errorf("produce %s: %w", topic, err)
					}
					fmt.Fprintf(os.Stderr, "compare: %s produce %dB %dp %s run %d: %.0f rec/s %.1f MB/s\n", t.name, size, parts, acks.name, r+1, rps, mbps)
					runs = append(runs, mbps)
				}
				record(t.name, fmt.Sprintf("franz-go produce %d B, %d partition(s), %s", size, parts, acks.name), "MB/s", "higher", median(runs))
				if size == 1024 && parts == 6 && acks.name == "acks=1" {
					var runs []float64
					for r := 0; r < o.repeat; r++ {
						c, err := consumeThroughput(ctx, t.bootstrap, topic, n*o.repeat, size)
						if err != nil {
							return fmt.Errorf("consume %s: %w", topic, err)
						}
						runs = append(runs, c)
					}
					record(t.name, "franz-go consume 1 KB records, 6 partitions", "MB/s", "higher", median(runs))
				}
			}
		}
	}
	if err := createTopic(ctx, t.bootstrap, "bench-latency", 1); err != nil {
		return err
	}
	lats, err := latencyAtRate(ctx, t.bootstrap, "bench-latency", 1024, 2000, time.Duration(float64(10*time.Second)*min(1, o.scale*2)), cyclicSnappy)
	if err != nil {
		return fmt.Errorf("latency run: %w", err)
	}
	sortDurations(lats)
	for _, q := range []struct {
		name string
		p    float64
	}{{"p50", 0.50}, {"p99", 0.99}, {"p99.9", 0.999}} {
		record(t.name, "franz-go produce latency at 2000 x 1 KB/s, acks=all, "+q.name, "ms", "lower", percentile(lats, q.p))
	}
	if !o.javaTools {
		return nil
	}
	jn := scaled(200_000)
	if err := createTopic(ctx, t.bootstrap, "bench-java", 6); err != nil {
		return err
	}
	v, err := javaProducerPerf(t.bootstrap, "bench-java", jn, 1024, "1")
	if err != nil {
		return err
	}
	record(t.name, "ProducerPerformance 1 KB, 6 partitions, acks=1", "MB/s", "higher", v[1])
	record(t.name, "ProducerPerformance 1 KB, acks=1, p99 latency", "ms", "lower", v[3])
	metric := "ConsumerPerformance 1 KB, 6 partitions (group consumer)"
	if !hasGroups(t.bootstrap) {
		notes[metric] = t.name + ": not run, consumer groups not implemented"
		record(t.name, metric, "MB/s", "higher", 0)
		return nil
	}
	c, err := javaConsumerPerf(t.bootstrap, "bench-java", jn)
	if err != nil {
		return err
	}
	record(t.name, metric, "MB/s", "higher", c)
	return nil
}

// median of the repeated runs; a single stall does not decide a ratio.
func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
