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
// created a moment ago. The priming client refreshes metadata every 50 ms while leaders are
// unknown (franz-go waits 5 s by default, which Kafka's just-created topics cost each time).
func createReplicated(ctx context.Context, bootstrap, topic string, parts int32, rf int16, configs map[string]*string) error {
	cl, err := client(bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MetadataMinAge(50*time.Millisecond))
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
	// randomKeyed: incompressible random values without compression, each record keyed by one
	// of keySpace random keys (as OpenMessaging Benchmark writes): every record byte is sent,
	// written and replicated, and the keys spread records over the partitions by murmur2.
	randomKeyed payload = iota
	// jsonLZ4 and jsonZstd: realistic JSON event values (distinct ids, timestamps, words and
	// numbers), keyed like randomKeyed, compressed by the producer with lz4 or zstd.
	jsonLZ4
	jsonZstd
)

// keySpace is the number of distinct keys the keyed payloads draw from.
const keySpace = 10_000

func (p payload) String() string {
	return [...]string{"random keyed values, no compression", "JSON values, lz4", "JSON values, zstd"}[p]
}

// opts are the client options of the payload.
func (p payload) opts() []kgo.Opt {
	switch p {
	case jsonLZ4:
		return []kgo.Opt{kgo.ProducerBatchCompression(kgo.Lz4Compression())}
	case jsonZstd:
		return []kgo.Opt{kgo.ProducerBatchCompression(kgo.ZstdCompression())}
	default:
		return []kgo.Opt{kgo.ProducerBatchCompression(kgo.NoCompression())}
	}
}

// records returns k records of size-byte values (k distinct ones) with keys drawn at random
// from keySpace keys; producers take them in turn, copying the record struct.
func (p payload) records(size, k int) []kgo.Record {
	rng := rand.New(rand.NewPCG(uint64(size), uint64(k)))
	keys := make([][]byte, keySpace)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%016x", rng.Uint64())
	}
	out := make([]kgo.Record, k)
	for j := range out {
		var v []byte
		if p == randomKeyed {
			v = make([]byte, size)
			for i := range v {
				v[i] = byte(rng.Uint32())
			}
		} else {
			v = jsonValue(rng, size)
		}
		out[j] = kgo.Record{Key: keys[rng.IntN(keySpace)], Value: v}
	}
	return out
}

var jsonWords = strings.Fields(`order shipped pending cancelled refunded customer warehouse berlin paris tokyo
	lisbon oslo austin express standard priority card invoice paypal transfer mobile web store kiosk
	green blue red small medium large retry timeout accepted rejected`)

// jsonValue is one JSON event of exactly size bytes: fields repeat across values as in a real
// event stream (names, enumerations), values differ (ids, times, amounts), so it compresses
// by roughly the ratio real events do, not to nothing.
func jsonValue(rng *rand.Rand, size int) []byte {
	word := func() string { return jsonWords[rng.IntN(len(jsonWords))] }
	if size < 256 { // too small for the full event: an id, a type and a padded note
		b := fmt.Appendf(nil, `{"id":"%08x","type":"%s","note":"`, rng.Uint32(), word())
		for len(b) < size-2 {
			b = append(b, byte('a'+rng.IntN(26)))
		}
		return append(b, `"}`...)
	}
	b := fmt.Appendf(nil, `{"event_id":"%016x","ts":%d,"type":"%s","customer":{"id":%d,"city":"%s","tier":"%s"},"items":[`,
		rng.Uint64(), 1_700_000_000_000+rng.Int64N(100_000_000_000), word(), rng.IntN(1_000_000), word(), word())
	for i := 0; len(b) < size-160; i++ { // an item is at most ~75 bytes, the tail ~40
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"sku":"%s-%05d","qty":%d,"price":%d.%02d,"tag":"%s"}`, word(), rng.IntN(100_000), 1+rng.IntN(9), rng.IntN(500), rng.IntN(100), word())
	}
	b = fmt.Appendf(b, `],"channel":"%s","note":"`, word())
	for len(b) < size-2 {
		b = append(b, byte('a'+rng.IntN(26)))
	}
	return append(b, `"}`...)
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
	recs := pl.records(size, 1024)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	wg.Add(n)
	for i := 0; i < n; i++ {
		r := recs[i%len(recs)]
		r.Topic = topic
		cl.Produce(ctx, &r, func(_ *kgo.Record, err error) {
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
	recs := pl.records(size, 1024)
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
		// Latency counts from the intended send time, so a stall that delays later sends is
		// charged to them too (coordinated omission corrected).
		intended := start.Add(time.Duration(i) * interval)
		i := i
		r := recs[i%len(recs)]
		r.Topic = topic
		cl.Produce(ctx, &r, func(_ *kgo.Record, err error) {
			lats[i] = time.Since(intended)
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
func javaProducerPerf(bootstrap, topic string, n, size int, acks string, lingerMs int) ([]float64, error) {
	out, err := exec.Command("scripts/kafka-ref.sh", "producer-perf", "--topic", topic, "--num-records", fmt.Sprint(n),
		"--record-size", fmt.Sprint(size), "--throughput", "-1", "--producer-props", "bootstrap.servers="+bootstrap,
		"acks="+acks, fmt.Sprintf("linger.ms=%d", lingerMs), "batch.size=262144").CombinedOutput()
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

// consumerPerf is ConsumerPerformance's summary: MB.sec over the whole run, the group join
// (rebalance.time.ms) and the rate of the fetch phase after it (fetch.MB.sec).
type consumerPerf struct{ mbps, rebalanceMs, fetchMBps float64 }

// javaConsumerPerf runs Kafka's ConsumerPerformance (a group consumer).
func javaConsumerPerf(bootstrap, topic string, n int) (consumerPerf, error) {
	out, err := exec.Command("scripts/kafka-ref.sh", "consumer-perf", "--bootstrap-server", bootstrap, "--topic", topic,
		"--messages", fmt.Sprint(n), "--timeout", "60000", "--hide-header").CombinedOutput()
	if err != nil {
		return consumerPerf{}, fmt.Errorf("consumer-perf: %w: %s", err, lastLine(string(out)))
	}
	return parseConsumerPerf(string(out))
}

// parseConsumerPerf reads the summary line: start.time, end.time, data.consumed.in.MB, MB.sec,
// data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec.
func parseConsumerPerf(out string) (consumerPerf, error) {
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, ",")
		if len(f) < 10 {
			continue
		}
		var v [10]float64
		ok := true
		for _, i := range []int{3, 6, 8} {
			x, err := strconv.ParseFloat(strings.TrimSpace(f[i]), 64)
			ok = ok && err == nil
			v[i] = x
		}
		if ok {
			return consumerPerf{mbps: v[3], rebalanceMs: v[6], fetchMBps: v[8]}, nil
		}
	}
	return consumerPerf{}, fmt.Errorf("consumer-perf: no result line in %q", lastLine(out))
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
	if _, _, err := produceThroughput(ctx, t.bootstrap, "bench-warmup", scaled(200_000), 1024, kgo.LeaderAck(), true, randomKeyed); err != nil {
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
					rps, mbps, err := produceThroughput(ctx, t.bootstrap, topic, n, size, acks.a, acks.name == "acks=1", randomKeyed)
					if err != nil {
						return fmt.Errorf("produce %s: %w", topic, err)
					}
					fmt.Fprintf(os.Stderr, "compare: %s produce %dB %dp %s run %d: %.0f rec/s %.1f MB/s\n", t.name, size, parts, acks.name, r+1, rps, mbps)
					runs = append(runs, mbps)
				}
				record(t.name, fmt.Sprintf("franz-go produce %d B random keyed, %d partition(s), %s", size, parts, acks.name), "MB/s", "higher", median(runs))
				if size == 1024 && parts == 6 && acks.name == "acks=1" {
					var runs []float64
					for r := 0; r < o.repeat; r++ {
						c, err := consumeThroughput(ctx, t.bootstrap, topic, n*o.repeat, size)
						if err != nil {
							return fmt.Errorf("consume %s: %w", topic, err)
						}
						runs = append(runs, c)
					}
					record(t.name, "franz-go consume 1 KB random keyed records, 6 partitions", "MB/s", "higher", median(runs))
				}
			}
		}
	}
	// The same 1 KB rows with realistic JSON values, compressed by the producer: MB/s counts
	// record bytes, so a broker that handles compressed batches well shows it here.
	for _, pl := range []payload{jsonLZ4, jsonZstd} {
		topic := fmt.Sprintf("bench-json-%d", pl)
		if err := createTopic(ctx, t.bootstrap, topic, 6); err != nil {
			return err
		}
		n := scaled(200_000)
		var runs []float64
		for r := 0; r < o.repeat; r++ {
			_, mbps, err := produceThroughput(ctx, t.bootstrap, topic, n, 1024, kgo.LeaderAck(), true, pl)
			if err != nil {
				return fmt.Errorf("produce %s: %w", topic, err)
			}
			runs = append(runs, mbps)
		}
		record(t.name, "franz-go produce 1 KB "+pl.String()+", 6 partitions, acks=1", "MB/s", "higher", median(runs))
		c, err := consumeThroughput(ctx, t.bootstrap, topic, n*o.repeat, 1024)
		if err != nil {
			return fmt.Errorf("consume %s: %w", topic, err)
		}
		record(t.name, "franz-go consume 1 KB "+pl.String()+", 6 partitions", "MB/s", "higher", c)
	}
	if err := createTopic(ctx, t.bootstrap, "bench-latency", 1); err != nil {
		return err
	}
	lats, err := latencyAtRate(ctx, t.bootstrap, "bench-latency", 1024, 2000, time.Duration(float64(10*time.Second)*min(1, o.scale*2)), randomKeyed)
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
	if err := measureCommits(ctx, t, "", 1, o.scale, record); err != nil {
		return err
	}
	if !o.quick { // two JVM starts of ShareConsumerPerformance: most of a quick run's budget
		if err := measureShare(ctx, t, scaled(200_000), record, notes); err != nil {
			return err
		}
	}
	if err := measureCurves(ctx, t, o, record); err != nil {
		return err
	}
	if !o.javaTools {
		return nil
	}
	jn := scaled(200_000)
	if err := createTopic(ctx, t.bootstrap, "bench-java", 6); err != nil {
		return err
	}
	v, err := javaProducerPerf(t.bootstrap, "bench-java", jn, 1024, "1", 5)
	if err != nil {
		return err
	}
	// The consumer reads a topic of full batches on both brokers. Read from the topic above it
	// would compare layouts: the producer closes batches sooner against a broker that answers
	// sooner (231 KB vs 262 KB on average against Gregor and Kafka), fewer of them fit a 1 MiB
	// partition fetch, and the Java consumer needs more round trips for the same records.
	if err := createTopic(ctx, t.bootstrap, "bench-java-full", 6); err != nil {
		return err
	}
	if _, err := javaProducerPerf(t.bootstrap, "bench-java-full", jn, 1024, "1", 1000); err != nil {
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
	c, err := javaConsumerPerf(t.bootstrap, "bench-java-full", jn)
	if err != nil {
		return err
	}
	// MB.sec counts from the tool's start, the group join included; the join and the fetch
	// phase are rows of their own so that neither hides the other.
	record(t.name, metric+", whole run", "MB/s", "higher", c.mbps)
	record(t.name, "ConsumerPerformance group join (rebalance.time.ms)", "ms", "lower", c.rebalanceMs)
	record(t.name, "ConsumerPerformance fetch phase (fetch.MB.sec)", "MB/s", "higher", c.fetchMBps)
	return nil
}

// median of the repeated runs; a single stall does not decide a ratio.
func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
