package tests

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
)

// The hostile-client suite: each attack runs against an in-process broker
// while a legitimate client keeps producing (acks=all) and consuming. For
// each, the process's resident memory must stay within a stated bound over
// its level before the attack (the peak is sampled while the attack runs),
// the legitimate client's produce p99 must stay within 3x its unloaded
// p99, and every acknowledged record must be read back. The figures are
// printed with -v.

// rssBytes is this process's resident set size.
func rssBytes(t testing.TB) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// rssPeak samples RSS until stop is called and returns the peak.
func rssPeak(t testing.TB) (stop func() int64) {
	var (
		mu   sync.Mutex
		peak = rssBytes(t)
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				r := rssBytes(t)
				mu.Lock()
				peak = max(peak, r)
				mu.Unlock()
			}
		}
	}()
	return func() int64 {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return max(peak, rssBytes(t))
	}
}

// bystander produces and consumes on its own connections and records the
// latency of each acks=all produce.
type bystander struct {
	t     *testing.T
	topic string
	cl    *kgo.Client
	mu    sync.Mutex
	lat   []time.Duration
	acked []string
	seq   int
}

func newBystander(t *testing.T, addr, topic string, opts ...kgo.Opt) *bystander {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &bystander{t: t, topic: topic, cl: cl}
}

// run produces one record at a time for d and returns the p99 latency of
// this run.
func (b *bystander) run(d time.Duration) time.Duration {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	var lat []time.Duration
	for end := time.Now().Add(d); time.Now().Before(end); {
		b.seq++
		v := fmt.Sprintf("bystander-%d", b.seq)
		start := time.Now()
		if err := b.cl.ProduceSync(ctx, &kgo.Record{Topic: b.topic, Value: []byte(v)}).FirstErr(); err != nil {
			b.t.Fatalf("bystander produce: %v", err)
		}
		lat = append(lat, time.Since(start))
		b.mu.Lock()
		b.acked = append(b.acked, v)
		b.mu.Unlock()
	}
	slices.Sort(lat)
	return lat[min(len(lat)-1, len(lat)*99/100)]
}

// verify reads the topic back and fails unless every acknowledged record
// is there.
func (b *bystander) verify(addr string) {
	b.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(b.topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		b.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b.mu.Lock()
	want := map[string]bool{}
	for _, v := range b.acked {
		want[v] = true
	}
	b.mu.Unlock()
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			b.t.Fatalf("bystander consume: %v (%d acknowledged records missing)", err, len(want))
		}
		fs.EachRecord(func(r *kgo.Record) { delete(want, string(r.Value)) })
	}
}

// unloadedFloor keeps a sub-millisecond unloaded p99 on a shared machine
// from making the 3x bound a coin toss: the baseline is at least this.
const unloadedFloor = 5 * time.Millisecond

// underAttack measures the bystander unloaded, runs attack while the
// bystander keeps working, and checks the RSS bound, the latency bound and
// that nothing acknowledged was lost. attack returns when it is in place;
// the bystander then runs for d while the attack holds.
func underAttack(t *testing.T, addr string, by *bystander, rssBound int64, d time.Duration, attack func()) {
	t.Helper()
	base := max(by.run(d), unloadedFloor)
	debug.FreeOSMemory()
	before := rssBytes(t)
	stop := rssPeak(t)
	attack()
	p99 := by.run(d)
	peak := stop()
	grew := peak - before
	t.Logf("RSS before %d MiB, peak %d MiB (+%d MiB, bound %d MiB); bystander produce p99 unloaded %v, under attack %v (bound %v)",
		before>>20, peak>>20, grew>>20, rssBound>>20, base, p99, 3*base)
	if grew > rssBound {
		t.Errorf("RSS grew by %d MiB under attack, bound %d MiB", grew>>20, rssBound>>20)
	}
	if p99 > 3*base {
		t.Errorf("bystander produce p99 %v under attack, more than 3x the unloaded %v", p99, base)
	}
	by.verify(addr)
}

// dialRaw dials addr for a client that speaks Kafka frames by hand.
func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fetchRepeating is a Fetch v12 listing topic's partition 0 n times with
// the given MaxBytes and 8 MiB per partition.
func fetchRepeating(topic string, n int, maxBytes int32, corr int32) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 1, maxBytes
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	for range n {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 0, 0, 8<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("hostile")).AppendRequest(nil, req, corr)
}

// fillPartition writes n records of size bytes to partition 0 of topic.
func fillPartition(t *testing.T, addr, topic string, n, size int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerBatchMaxBytes(int32(size)+1024),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range n {
		v := make([]byte, size)
		rand.Read(v)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// metric reads one unlabelled sample from the broker's /metrics.
func metric(t *testing.T, httpAddr, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

// waitMetric polls until ok holds for the metric's value.
func waitMetric(t *testing.T, httpAddr, name string, limit time.Duration, ok func(float64) bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		v := metric(t, httpAddr, name)
		if ok(v) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %v after %v", name, v, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A reader pipelines fetches that list one partition 200 times with
// MaxBytes 0 and never reads its socket. Before fetch.max.bytes, the
// deduplication of partitions and the per-connection response bound, each
// fetch read the partition 200 times (MaxBytes 0 meant 2 GiB) and every
// response was built and queued: about 1.4 GiB of RSS. Now each fetch
// reads the partition once and returns its first batch, the broker stops
// reading a connection once a MiB of its responses waits beyond what the
// kernel's socket buffers hold (muted), and it
// closes a connection whose responses make no progress for
// connections_max_idle_ms.
func TestHostilePipelinedFetchNeverRead(t *testing.T) {
	b := startBroker(t, func(c *config.Config) {
		c.Security.IdleMs = 2000
		c.Listeners.HTTP = "127.0.0.1:0"
	})
	createTopic(t, b.Addr, "big", 1, nil)
	createTopic(t, b.Addr, "bystander", 1, nil)
	fillPartition(t, b.Addr, "big", 2, 900<<10)
	by := newBystander(t, b.Addr, "bystander")
	by.run(100 * time.Millisecond) // its connections are open before the count
	open := metric(t, b.HTTPAddr, "gregor_connections")
	const attackers = 4
	underAttack(t, b.Addr, by, 96<<20, 2*time.Second, func() {
		for i := range attackers {
			c := dialRaw(t, b.Addr)
			// The measured attack: four fetches listing the partition
			// 200 times each. Then 28 plain ones, whose first batches
			// are more than the sockets' kernel buffers hold, so that
			// responses wait in the broker and the connection is muted.
			for j := range 32 {
				n := 200
				if j >= 4 {
					n = 1
				}
				if _, err := c.Write(fetchRepeating("big", n, 0, int32(i*100+j))); err != nil {
					t.Fatal(err)
				}
			}
		}
		waitMetric(t, b.HTTPAddr, "gregor_connections_muted", 10*time.Second, func(v float64) bool { return v >= attackers })
		t.Logf("muted connections %v, queued response bytes %v", metric(t, b.HTTPAddr, "gregor_connections_muted"),
			metric(t, b.HTTPAddr, "gregor_queued_response_bytes"))
	})
	// The broker gives up on the connections whose responses go unread.
	waitMetric(t, b.HTTPAddr, "gregor_connections", 20*time.Second, func(v float64) bool { return v <= open })
	waitMetric(t, b.HTTPAddr, "gregor_queued_response_bytes", 5*time.Second, func(v float64) bool { return v == 0 })
}

// One fetch lists the same partition 1,000 times: it is read and answered
// once.
func TestHostileFetchSamePartition1000Times(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "big", 1, nil)
	createTopic(t, b.Addr, "bystander", 1, nil)
	fillPartition(t, b.Addr, "big", 4, 256<<10)
	by := newBystander(t, b.Addr, "bystander")
	c := dialRaw(t, b.Addr)
	var resp *kmsg.FetchResponse
	underAttack(t, b.Addr, by, 48<<20, 2*time.Second, func() {
		if _, err := c.Write(fetchRepeating("big", 1000, 50<<20, 1)); err != nil {
			t.Fatal(err)
		}
		resp = readFetchResponse(t, c, 12)
	})
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("the response lists %d topics, the first with %d partitions; want the partition once",
			len(resp.Topics), len(resp.Topics[0].Partitions))
	}
	if n := len(resp.Topics[0].Partitions[0].RecordBatches); n < 1<<20 {
		t.Fatalf("the partition's answer holds %d bytes, want all four batches", n)
	}
}

// readFetchResponse reads one Fetch response of the given version.
func readFetchResponse(t *testing.T, c net.Conn, version int16) *kmsg.FetchResponse {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	// correlation id, then the flexible header's tags (one empty byte)
	if err := resp.ReadFrom(buf[5:]); err != nil {
		t.Fatal(err)
	}
	return resp
}
