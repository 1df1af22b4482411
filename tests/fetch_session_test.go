package tests

import (
	"context"
	"fmt"
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
