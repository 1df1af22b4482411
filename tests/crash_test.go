package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCrashRecovery runs "gregor serve" as a child process, writes
// sequential values with an idempotent acks=all producer, SIGKILLs the
// broker after a number of acknowledgements (records are in flight at that
// moment), restarts it on the same data directory, and does so again for a
// second cycle. It then checks that every acknowledged value is present
// exactly once, that nothing is duplicated, that each partition keeps
// production order, and that the partition directories hold Kafka-named
// segment files.
func TestCrashRecovery(t *testing.T) {
	const (
		topic      = "crash"
		partitions = 3
		window     = 500 // records in flight at most
		cycles     = 2   // kill and restart this many times
	)
	killEvery := 3000
	if testing.Short() {
		killEvery = 500
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfgPath := writeBrokerConfig(t, dir, dataDir, addr)

	broker := startChildBroker(t, cfgPath, addr)
	createTopic(t, addr, topic, partitions, nil)

	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.RequiredAcks(kgo.AllISRAcks()), // idempotent: kgo's default with acks=all
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.RecordDeliveryTimeout(2*time.Minute),
		kgo.ProducerLinger(0),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	var (
		mu       sync.Mutex // guards acked, failed, ackCount, killAt, killNow
		acked    = map[int]bool{}
		failed   = map[int]error{}
		ackCount int
		killAt   int           // the ackCount that triggers killNow
		killNow  chan struct{} // closed when ackCount reaches killAt
	)
	sem := make(chan struct{}, window)
	onDone := func(i int) func(*kgo.Record, error) {
		return func(_ *kgo.Record, err error) {
			mu.Lock()
			if err != nil {
				failed[i] = err
			} else {
				acked[i] = true
				ackCount++
				if ackCount == killAt {
					close(killNow)
				}
			}
			mu.Unlock()
			<-sem
		}
	}
	record := func(i int) *kgo.Record {
		return &kgo.Record{Topic: topic, Key: []byte("k" + strconv.Itoa(i%97)), Value: []byte(fmt.Sprintf("%09d", i))}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	produced := 0
	for cycle := 1; cycle <= cycles; cycle++ {
		mu.Lock()
		killAt = ackCount + killEvery
		killNow = make(chan struct{})
		trigger := killNow
		mu.Unlock()
		// Produce until the kill: the producer stops only after the broker
		// is dead, so a window of records is in flight when it dies.
		killed := make(chan struct{})
		go func(b *childBroker) {
			<-trigger
			if err := b.kill(); err != nil {
				t.Error(err)
			}
			close(killed)
		}(broker)
		limit := produced + 50*killEvery
	produce:
		for ; produced < limit; produced++ {
			select {
			case <-killed:
				break produce
			default:
			}
			select {
			case sem <- struct{}{}:
			case <-killed:
				break produce
			case <-ctx.Done():
				t.Fatalf("cycle %d: timed out producing after %d records", cycle, produced)
			}
			cl.Produce(ctx, record(produced), onDone(produced))
		}
		if produced == limit {
			t.Fatalf("cycle %d: the broker was not killed after %d records", cycle, produced)
		}
		mu.Lock()
		t.Logf("cycle %d: killed the broker after %d acknowledgements; %d records produced, %d in flight",
			cycle, ackCount, produced, produced-len(acked)-len(failed))
		mu.Unlock()

		// Restart on the same data directory; in-flight records are
		// retried by the producer once the broker is back.
		broker = startChildBroker(t, cfgPath, addr)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("flush after the last restart: %v", err)
	}
	// And the producer keeps working after the restarts.
	const after = 200
	for i := produced; i < produced+after; i++ {
		sem <- struct{}{}
		cl.Produce(ctx, record(i), onDone(i))
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("flush of the records after restart: %v", err)
	}
	total := produced + after
	mu.Lock()
	for i := produced; i < total; i++ {
		if !acked[i] {
			t.Errorf("record %d, produced after the restarts, not acknowledged: %v", i, failed[i])
		}
	}
	t.Logf("%d acknowledged, %d failed, of %d produced", len(acked), len(failed), total)
	mu.Unlock()

	// Read everything back.
	ends := endOffsets(t, addr, topic)
	got := kgoClient{}.Consume(t, addr, topic, ends)
	count := map[int]int{}
	lastInPartition := map[int32]int{}
	for _, g := range got {
		i, err := strconv.Atoi(string(g.Value))
		if err != nil || i < 0 || i >= total {
			t.Errorf("partition %d offset %d holds %q, not a produced value", g.Partition, g.Offset, g.Value)
			continue
		}
		count[i]++
		if want := murmur2Partition([]byte("k"+strconv.Itoa(i%97)), partitions); g.Partition != want {
			t.Errorf("value %d in partition %d, want %d", i, g.Partition, want)
		}
		if last, ok := lastInPartition[g.Partition]; ok && i <= last {
			t.Errorf("partition %d: value %d at offset %d follows value %d (order broken)", g.Partition, i, g.Offset, last)
		}
		lastInPartition[g.Partition] = i
	}
	var lost, dup []int
	for i := range acked {
		if count[i] == 0 {
			lost = append(lost, i)
		}
	}
	for i, c := range count {
		if c > 1 {
			dup = append(dup, i)
		}
	}
	sort.Ints(lost)
	sort.Ints(dup)
	if len(lost) > 0 {
		t.Errorf("%d acknowledged records lost, first: %v", len(lost), lost[:min(len(lost), 20)])
	}
	if len(dup) > 0 {
		t.Errorf("%d records duplicated, first: %v", len(dup), dup[:min(len(dup), 20)])
	}
	t.Logf("read %d records: %d acknowledged, %d unacknowledged present", len(got), len(acked), len(count)-len(acked))

	// Kafka's on-disk names.
	for p := 0; p < partitions; p++ {
		pdir := filepath.Join(dataDir, fmt.Sprintf("%s-%d", topic, p))
		for _, ext := range []string{".log", ".index", ".timeindex"} {
			name := filepath.Join(pdir, strings.Repeat("0", 20)+ext)
			if _, err := os.Stat(name); err != nil {
				entries, _ := os.ReadDir(pdir)
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("missing %s (directory holds %v)", name, names)
			}
		}
	}
}
