package tests

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// TestFetchSessionsFranzConsumer reads six partitions with franz-go, which
// uses incremental fetch sessions (KIP-227) unless told not to: every record
// arrives exactly once, including records produced while the consumer sits in
// a long poll of an incremental fetch, and the broker reports the session.
func TestFetchSessionsFranzConsumer(t *testing.T) {
	b := startBroker(t, func(c *config.Config) { c.Listeners.HTTP = "127.0.0.1:0" })
	const topic, parts, perRound = "sessions", 6, 300
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if _, err := kadm.NewClient(prod).CreateTopic(ctx, parts, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	produce := func(round int) {
		t.Helper()
		for i := range perRound {
			v := fmt.Sprintf("r%d-%d", round, i)
			if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}

	cons, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500*time.Millisecond),
		kgo.FetchMaxPartitionBytes(2048))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	seen := map[string]int{}
	consume := func(want int) {
		t.Helper()
		for len(seen) < want {
			fs := cons.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatalf("%d of %d records before the deadline", len(seen), want)
			}
			fs.EachError(func(topic string, p int32, err error) { t.Errorf("fetch %s/%d: %v", topic, p, err) })
			fs.EachRecord(func(r *kgo.Record) {
				seen[string(r.Value)]++
				if seen[string(r.Value)] > 1 {
					t.Errorf("record %q (partition %d offset %d) delivered twice", r.Value, r.Partition, r.Offset)
				}
			})
		}
	}
	produce(0)
	consume(perRound)
	// The consumer now waits in incremental fetches; new records on every
	// partition must reach it through them.
	produce(1)
	consume(2 * perRound)
	for round := range 2 {
		for i := range perRound {
			if v := fmt.Sprintf("r%d-%d", round, i); seen[v] != 1 {
				t.Errorf("record %q delivered %d times", v, seen[v])
			}
		}
	}
	if n := metric(t, b.HTTPAddr, "gregor_fetch_sessions"); n < 1 {
		t.Errorf("gregor_fetch_sessions = %v, want the consumer's session", n)
	}
	if n := metric(t, b.HTTPAddr, "gregor_fetch_session_incremental_requests_total"); n < 2 {
		t.Errorf("gregor_fetch_session_incremental_requests_total = %v, want incremental fetches", n)
	}
}

// TestFetchSessionsJavaConsumer runs Apache Kafka's ConsumerPerformance (the
// Java group consumer) over six partitions with small partition fetches
// (--fetch-size is max.partition.fetch.bytes), so
// that it fetches many times: it must read every record, through incremental
// fetches of its session. It needs the Kafka jars and java.
func TestFetchSessionsJavaConsumer(t *testing.T) {
	script, ok := kafkaTools(t)
	if !ok {
		t.Skip("Apache Kafka's jars or java are missing (scripts/kafka-ref.sh fetch)")
	}
	b := startBroker(t, func(c *config.Config) {
		c.Listeners.HTTP = "127.0.0.1:0"
		c.Groups.GroupInitialRebalanceDelayMs = 0
	})
	const topic, n = "java-sessions", 3000
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Small uncompressed batches, so that a partition fetch of 16 KiB
	// returns a few of them.
	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16384))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if _, err := kadm.NewClient(prod).CreateTopic(ctx, 6, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		prod.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%01024d", i))}, nil)
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, script, "consumer-perf", "--bootstrap-server", b.Addr, "--topic", topic,
		"--messages", fmt.Sprint(n), "--group", "java-sessions", "--timeout", "60000", "--fetch-size", "16384").CombinedOutput()
	if err != nil || strings.Contains(string(out), "Exception") {
		t.Fatalf("consumer-perf: %v\n%s", err, out)
	}
	// The data line: start, end, MB, MB.sec, nMsg, ...
	var consumed string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Split(line, ", "); len(f) >= 5 && !strings.HasPrefix(line, "start.time") {
			consumed = f[4]
		}
	}
	if consumed != fmt.Sprint(n) {
		t.Fatalf("consumer-perf read %q records, want %d:\n%s", consumed, n, out)
	}
	if m := metric(t, b.HTTPAddr, "gregor_fetch_session_incremental_requests_total"); m < 10 {
		t.Errorf("gregor_fetch_session_incremental_requests_total = %v, want the Java consumer's incremental fetches", m)
	}
}
