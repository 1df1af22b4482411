package tests

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// txnConfig keeps __transaction_state and __consumer_offsets small and
// checks transaction timeouts often, so tests stay fast.
func txnConfig(c *config.Config) {
	groupConfig(c)
	c.Transactions.StateLogPartitions = 5
	c.Transactions.AbortTimedOutCheckIntervalMs = 100
}

func txnClient(t *testing.T, addr, id string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.TransactionalID(id),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produceTxns writes n transactions of three records to each of two
// partitions, committing even ones and aborting odd ones, and returns the
// values committed.
func produceTxns(t *testing.T, cl *kgo.Client, topic string, n int) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	committed := map[string]bool{}
	for i := 0; i < n; i++ {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var vals []string
		for p := int32(0); p < 2; p++ {
			for j := 0; j < 3; j++ {
				v := fmt.Sprintf("t%d-p%d-%d", i, p, j)
				vals = append(vals, v)
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
					t.Fatalf("produce in transaction %d: %v", i, err)
				}
			}
		}
		commit := i%2 == 0
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end transaction %d: %v", i, err)
		}
		if commit {
			for _, v := range vals {
				committed[v] = true
			}
		}
	}
	return committed
}

func checkCommitted(t *testing.T, client string, got []string, want map[string]bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, v := range got {
		if !want[v] {
			t.Errorf("%s read_committed saw %q, which was aborted", client, v)
		}
		if seen[v] {
			t.Errorf("%s saw %q twice", client, v)
		}
		seen[v] = true
	}
	if len(seen) != len(want) {
		t.Errorf("%s saw %d committed records, want %d", client, len(seen), len(want))
	}
}

// TestTxnReadCommittedClients: franz-go commits and aborts transactions in
// turn; franz-go, kafka-go and sarama readers with read_committed see
// every committed record once and never an aborted one, while a
// read_uncommitted reader sees both.
func TestTxnReadCommittedClients(t *testing.T) {
	b := startBroker(t, txnConfig)
	const topic = "txn-rc"
	createTopic(t, b.Addr, topic, 2, nil)
	want := produceTxns(t, txnClient(t, b.Addr, "rc-producer"), topic, 6)
	total := len(want)

	// franz-go, both isolation levels.
	for _, committed := range []bool{true, false} {
		iso := kgo.ReadUncommitted()
		if committed {
			iso = kgo.ReadCommitted()
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		limit := total
		if !committed {
			limit = 2 * total
		}
		for len(got) < limit && ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		cancel()
		cl.Close()
		if committed {
			checkCommitted(t, "franz-go", got, want)
		} else if len(got) != 2*total {
			t.Errorf("franz-go read_uncommitted saw %d records, want %d", len(got), 2*total)
		}
	}

	// sarama.
	sc := sarama.NewConfig()
	sc.Version = sarama.V2_8_0_0
	sc.Consumer.IsolationLevel = sarama.ReadCommitted
	consumer, err := sarama.NewConsumer([]string{b.Addr}, sc)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var got []string
	for p := int32(0); p < 2; p++ {
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		timeout := time.After(5 * time.Second)
	loop:
		for {
			select {
			case m := <-pc.Messages():
				got = append(got, string(m.Value))
				if pc.HighWaterMarkOffset() > 0 && m.Offset >= pc.HighWaterMarkOffset()-2 {
					break loop
				}
			case <-timeout:
				break loop
			}
		}
		pc.Close()
	}
	checkCommitted(t, "sarama", got, want)

	// kafka-go applies the last stable offset but does not filter aborted
	// transactions itself (segmentio/kafka-go#1332): it must see every
	// committed record and nothing of a transaction still open.
	prod := txnClient(t, b.Addr, "rc-open")
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer pcancel()
	for p := int32(0); p < 2; p++ {
		if err := prod.ProduceSync(pctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("open")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var kg []string
	for p := 0; p < 2; p++ {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{b.Addr}, Topic: topic, Partition: p,
			IsolationLevel: kafka.ReadCommitted, MaxWait: 200 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				break
			}
			kg = append(kg, string(m.Value))
		}
		cancel()
		r.Close()
	}
	seen := map[string]bool{}
	for _, v := range kg {
		if v == "open" {
			t.Errorf("kafka-go read_committed saw a record of an open transaction")
		}
		seen[v] = true
	}
	for v := range want {
		if !seen[v] {
			t.Errorf("kafka-go read_committed missed %q", v)
		}
	}
}

// TestTxnZombieFenced: a second producer with the same transactional id
// fences the first, whose open transaction is aborted and whose commit
// fails; the new producer's transaction commits.
func TestTxnZombieFenced(t *testing.T) {
	b := startBroker(t, txnConfig)
	const topic = "txn-zombie"
	createTopic(t, b.Addr, topic, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zombie := txnClient(t, b.Addr, "zombie")
	if err := zombie.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	fresh := txnClient(t, b.Addr, "zombie")
	if err := fresh.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("fresh")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := fresh.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("fresh commit: %v", err)
	}
	err := zombie.EndTransaction(ctx, kgo.TryCommit)
	if err == nil {
		t.Fatal("the fenced producer committed")
	}
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) && !errors.Is(err, kerr.InvalidProducerIDMapping) {
		t.Logf("zombie commit failed with %v", err)
	}
	got := readCommitted(t, b.Addr, topic, 1)
	if strings.Join(got, ",") != "fresh" {
		t.Fatalf("read_committed after fencing: %v", got)
	}
}

// readCommitted reads a topic with read_committed until want records came
// or a quiet period passed.
func readCommitted(t *testing.T, addr, topic string, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for len(got) < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	// Anything more that arrives shortly after is a leak.
	extra, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	cl.PollFetches(extra).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	sort.Strings(got)
	return got
}

// TestTxnHangingTransactionAborted: a producer opens a transaction and
// disappears; after transaction.timeout.ms the coordinator aborts it, the
// last stable offset moves past it and the transaction is listed and
// described as aborted.
func TestTxnHangingTransactionAborted(t *testing.T) {
	b := startBroker(t, txnConfig)
	const topic = "txn-hang"
	createTopic(t, b.Addr, topic, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := txnClient(t, b.Addr, "hanging", kgo.TransactionTimeout(1500*time.Millisecond))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("hang")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	adm := newAdmin(t, b.Addr)
	lso := func() int64 {
		offs, err := adm.ListEndOffsets(ctx, topic) // read_uncommitted: the high watermark
		if err != nil {
			t.Fatal(err)
		}
		hw, _ := offs.Lookup(topic, 0)
		cl2 := kadm.NewClient(cl) // the producer's connection serves admin requests too
		_ = cl2
		return hw.Offset
	}
	if hw := lso(); hw != 1 {
		t.Fatalf("high watermark %d, want 1", hw)
	}
	described, err := adm.DescribeTransactions(ctx, "hanging")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := described["hanging"]; !ok || d.State != "Ongoing" {
		t.Fatalf("described %+v", described)
	}
	eventually(t, 20*time.Second, "the hanging transaction is aborted", func() error {
		d, err := adm.DescribeTransactions(ctx, "hanging")
		if err != nil {
			return err
		}
		if s := d["hanging"].State; s != "CompleteAbort" {
			return fmt.Errorf("state %s", s)
		}
		return nil
	})
	if got := readCommitted(t, b.Addr, topic, 0); len(got) != 0 {
		t.Fatalf("read_committed saw %v", got)
	}
	listed, err := adm.ListTransactions(ctx, nil, []string{"CompleteAbort"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := listed["hanging"]; !ok {
		t.Fatalf("ListTransactions(CompleteAbort) = %v", listed)
	}
}
