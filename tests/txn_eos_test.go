package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// writeTxnBrokerConfig writes a broker.toml for a child broker with small
// coordinator topics, no initial rebalance delay and a frequent
// transaction timeout check.
func writeTxnBrokerConfig(t *testing.T, dir, dataDir, addr string) string {
	t.Helper()
	text := fmt.Sprintf(`data_dir = %q

[listeners]
kafka = %q
http = ""

[groups]
offsets_topic_partitions = 5
group_initial_rebalance_delay_ms = 0
group_min_session_timeout_ms = 500

[transactions]
state_log_partitions = 5
abort_timed_out_check_interval_ms = 200
`, dataDir, addr)
	path := filepath.Join(dir, "broker.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTxnExactlyOnceAcrossKills copies an input topic to an output topic
// with franz-go's GroupTransactSession (consume, produce and commit the
// offsets in one transaction) while the broker is SIGKILLed and restarted
// several times. Afterwards a read_committed reader of the output sees every
// input record exactly once: records of transactions aborted by the kills
// are never visible, and none is copied twice.
func TestTxnExactlyOnceAcrossKills(t *testing.T) {
	const (
		input, output = "eos-in", "eos-out"
		partitions    = 3
		kills         = 3
	)
	n := 3000
	if testing.Short() {
		n = 900
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfgPath := writeTxnBrokerConfig(t, dir, dataDir, addr)
	broker := startChildBroker(t, cfgPath, addr)
	createTopic(t, addr, input, partitions, nil)
	createTopic(t, addr, output, partitions, nil)

	// The input: values 0..n-1, keyed so every partition gets some.
	func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.AllISRAcks()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		recs := make([]*kgo.Record, n)
		for i := range recs {
			v := strconv.Itoa(i)
			recs[i] = &kgo.Record{Topic: input, Key: []byte(v), Value: []byte(v)}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}()

	var copied atomic.Int64 // records in committed transactions, as the session saw them
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sess, err := kgo.NewGroupTransactSession(
			kgo.SeedBrokers(addr),
			kgo.TransactionalID("eos-copier"),
			kgo.TransactionTimeout(6*time.Second),
			kgo.ConsumerGroup("eos-group"),
			kgo.ConsumeTopics(input),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.SessionTimeout(6*time.Second),
			kgo.FetchMaxWait(200*time.Millisecond),
			kgo.MaxBufferedRecords(200),
			kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		)
		if err != nil {
			t.Error(err)
			return
		}
		defer sess.Close()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			fetches := sess.PollRecords(ctx, 150)
			cancel()
			if fetches.NumRecords() == 0 {
				continue
			}
			if err := sess.Begin(); err != nil {
				// A transaction left open by a failed End (the broker died
				// under it) must be aborted before the next can begin.
				t.Logf("begin: %v", err)
				abortOpen(sess)
				continue
			}
			ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
			fetches.EachRecord(func(r *kgo.Record) {
				sess.Produce(ctx, &kgo.Record{Topic: output, Key: r.Key, Value: r.Value}, nil)
			})
			committed, err := sess.End(ctx, kgo.TryCommit)
			cancel()
			if err == nil && committed {
				copied.Add(int64(fetches.NumRecords()))
			}
			if err != nil {
				t.Logf("end: %v", err)
				abortOpen(sess)
			}
		}
	}()

	// Kill the broker when the copy is a quarter, half and three quarters
	// done, restarting it on the same data directory at once.
	for k := 1; k <= kills; k++ {
		target := int64(n * k / (kills + 1))
		eventually(t, 90*time.Second, fmt.Sprintf("copy reaches %d before kill %d", target, k), func() error {
			if c := copied.Load(); c < target {
				return fmt.Errorf("copied %d", c)
			}
			return nil
		})
		if err := broker.kill(); err != nil {
			t.Fatal(err)
		}
		broker = startChildBroker(t, cfgPath, addr)
	}

	// Wait until the output holds n committed records, then for a quiet
	// moment in which nothing more may appear.
	seen := map[string]int{}
	var total int
	reader, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(output),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	deadline := time.Now().Add(120 * time.Second)
	for len(seen) < n && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		reader.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			total++
		})
		cancel()
	}
	close(stop)
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	reader.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
		seen[string(r.Value)]++
		total++
	})
	cancel()

	missing, dups := 0, 0
	for i := 0; i < n; i++ {
		switch c := seen[strconv.Itoa(i)]; {
		case c == 0:
			missing++
		case c > 1:
			dups++
		}
	}
	if missing > 0 || dups > 0 || total != n || len(seen) != n {
		t.Fatalf("output after %d kills: %d distinct of %d, %d records, %d missing, %d duplicated", kills, len(seen), n, total, missing, dups)
	}
	t.Logf("copied %d records exactly once across %d SIGKILLs", n, kills)
}

// abortOpen ends a session's open transaction with an abort, retrying while
// the broker restarts; the records polled for it are fetched again.
func abortOpen(sess *kgo.GroupTransactSession) {
	for attempt := 0; attempt < 50; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := sess.End(ctx, kgo.TryAbort)
		cancel()
		if err == nil {
			return
		}
	}
}
