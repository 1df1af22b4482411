package tests

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/mirror"
)

// produceKilobytes writes n random 1 KB values with keys to every partition
// of topic with a default producer, as kafka-producer-perf-test would.
func produceKilobytes(t *testing.T, addr, topic string, partitions int32, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < n; i++ {
			v := make([]byte, 1024)
			_, _ = rand.Read(v)
			wg.Add(1)
			cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: p, Key: []byte(fmt.Sprintf("k%d-%d", p, i)), Value: v},
				func(_ *kgo.Record, err error) {
					defer wg.Done()
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
					}
				})
		}
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce to %s: %v", topic, firstErr)
	}
}

// TestMirrorCopyBacklogWithinTargetLimits is issue 15's reproduction at
// test size: a source backlog of 1 KB records deep enough that one fetch
// returns megabytes per partition, copied to a target with the default
// max.message.bytes (1,048,588). Every batch the mirror writes must fit
// the target's limit, so every record arrives and no session fails.
func TestMirrorCopyBacklogWithinTargetLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	const parts, perPartition = 6, 4000 // about 4 MB per partition
	east := startBroker(t, fastLog)
	west := startBroker(t, fastLog)
	createTopic(t, east.Addr, "orders", parts, nil)
	produceKilobytes(t, east.Addr, "orders", parts, perPartition)
	_, cfg := mirrorConfig(t, east.Addr, west.Addr, "copy", "")
	m := startMirror(t, cfg)
	want := map[int32]int64{}
	for p := int32(0); p < parts; p++ {
		want[p] = perPartition
	}
	waitMirrored(t, west.Addr, "east.orders", want, 60*time.Second)
	if st := m.Status(); st.LastError != "" {
		t.Fatalf("a session failed while copying the backlog: %s", st.LastError)
	}
}

// produceWithBig writes to partition 0 of topic n small records, one record
// of big bytes, and n small records again, and n small records to
// partition 1.
func produceWithBig(t *testing.T, addr, topic string, n, big int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(4<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := 0; i < 2*n+1; i++ {
		v := []byte(fmt.Sprintf("v%d", i))
		if i == n {
			v = make([]byte, big)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: v})
	}
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 1, Value: []byte(fmt.Sprintf("w%d", i))})
	}
	for _, r := range recs {
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce to %s[%d]: %v", topic, r.Partition, err)
		}
	}
}

// TestMirrorRecordTooLarge copies a partition holding a record larger than
// the target topic accepts. With on_record_too_large = "stop" the partition
// goes to the failing state at that record (the records before it copied,
// the other partition going on, no session restarted) until the target's
// max.message.bytes is raised: the mirror re-reads it and the partition
// completes. With "skip" the record is left out, counted and reported, and
// the partition goes on past it.
func TestMirrorRecordTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	const n, big = 10, 1200 << 10
	for _, policy := range []string{mirror.TooLargeStop, mirror.TooLargeSkip} {
		t.Run(policy, func(t *testing.T) {
			east := startBroker(t, fastLog, func(c *config.Config) { c.Log.MaxMessageBytes = 4 << 20 })
			west := startBroker(t, fastLog)
			createTopic(t, east.Addr, "orders", 2, nil)
			produceWithBig(t, east.Addr, "orders", n, big)
			_, cfg := mirrorConfig(t, east.Addr, west.Addr, "copy", "")
			cfg.Mirror.OnRecordTooLarge = policy
			m := startMirror(t, cfg)
			if policy == mirror.TooLargeSkip {
				waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: 2 * n, 1: n}, 30*time.Second)
				eventually(t, 30*time.Second, "the skipped record is reported", func() error {
					ps, _ := partitionStatus(m, "orders", 0)
					if ps.State != mirror.StateMirroring || ps.TooLarge != 1 || ps.Lag != 0 || ps.Position != 2*n+1 ||
						!strings.Contains(ps.Error, "max.message.bytes 1048588") {
						return fmt.Errorf("status %+v", ps)
					}
					return nil
				})
				if st := m.Status(); st.LastError != "" {
					t.Fatalf("a session failed: %s", st.LastError)
				}
				return
			}
			waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: n, 1: n}, 30*time.Second)
			eventually(t, 30*time.Second, "the partition is failing", func() error {
				ps, _ := partitionStatus(m, "orders", 0)
				if ps.State != mirror.StateFailing || ps.Position != n || !ps.RetryAt.IsZero() ||
					!strings.Contains(ps.Error, fmt.Sprintf("offset %d", n)) || !strings.Contains(ps.Error, "MESSAGE_TOO_LARGE") {
					return fmt.Errorf("status %+v", ps)
				}
				return nil
			})
			if st := m.Status(); st.LastError != "" || len(st.Failing()) != 1 {
				t.Fatalf("want one failing partition and no failed session: %+v", st)
			}
			// gregor mirror status reads the failing state from the target.
			eventually(t, 30*time.Second, "the clusters' status shows the failing partition", func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				cs, err := mirror.ReadStatus(ctx, cfg)
				if err != nil {
					return err
				}
				for _, ps := range cs.Partitions {
					if ps.Topic == "orders" && ps.Partition == 0 {
						if ps.State != mirror.StateFailing || !strings.Contains(ps.Error, "MESSAGE_TOO_LARGE") || ps.LastWrite.IsZero() {
							return fmt.Errorf("status %+v", ps)
						}
						return nil
					}
				}
				return fmt.Errorf("no orders[0] in %+v", cs.Partitions)
			})
			if ends := endOffsets(t, west.Addr, "east.orders"); ends[0] != n {
				t.Fatalf("target end offsets %v while failing, want %d on partition 0", ends, n)
			}
			// Raising the target's limit lets the partition complete.
			adm := newAdmin(t, west.Addr)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			v := strconv.Itoa(4 << 20)
			resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.message.bytes", Value: &v}}, "east.orders")
			if err == nil {
				_, err = resps.On("east.orders", nil)
			}
			if err != nil {
				t.Fatalf("raise max.message.bytes: %v", err)
			}
			waitMirrored(t, west.Addr, "east.orders", map[int32]int64{0: 2*n + 1, 1: n}, 30*time.Second)
			eventually(t, 30*time.Second, "the partition mirrors again", func() error {
				if ps, _ := partitionStatus(m, "orders", 0); ps.State != mirror.StateMirroring {
					return fmt.Errorf("status %+v", ps)
				}
				return nil
			})
		})
	}
}
