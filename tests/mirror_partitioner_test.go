package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/mirror"
)

// produceSpreadSource writes records from..from+n to a 6-partition source
// topic: the source partition is i mod 6, so that one key lives in several
// source partitions, and every tenth record has no key.
func produceSpreadSource(t *testing.T, addr, topic string, from, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		r := &kgo.Record{Topic: topic, Partition: int32(i % 6), Value: []byte(fmt.Sprintf("v%06d", i)),
			Headers: []kgo.RecordHeader{{Key: "seq", Value: []byte(fmt.Sprint(i))}}}
		if i%10 != 0 {
			r.Key = []byte(fmt.Sprintf("k%03d", i%97))
		}
		recs = append(recs, r)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

func sumOffsets(m map[int32]int64) int64 {
	var n int64
	for _, o := range m {
		n += o
	}
	return n
}

// TestMirrorThroughPartitioner mirrors a 6-partition topic into target
// topics created beforehand with another partition count. Copy mode places
// every record once, a keyed one on murmur2(key) mod the target's count (as
// a Kafka producer's default partitioner), a keyless one on its source
// partition mod the count, in source order per source partition and key,
// across a restart of the mirror; the topic's groups are reported as not
// translated and get no offsets on the target. Link mode refuses the topic.
func TestMirrorThroughPartitioner(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	for _, tt := range []struct {
		name    string
		mode    string
		target  int32
		grow    bool
		eos     bool
		skipped string // link: the reason in the status
	}{
		{"copy-smaller-no-grow", mirror.ModeCopy, 3, false, false, ""},
		{"copy-larger", mirror.ModeCopy, 9, true, false, ""},
		{"copy-smaller-exactly-once", mirror.ModeCopy, 3, false, true, ""},
		{"link-refused", mirror.ModeLink, 3, false, false, "link mode keeps offsets and needs equal partition counts"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			east := startBroker(t, fastLog)
			west := startBroker(t, fastLog)
			createTopic(t, east.Addr, "orders", 6, nil)
			createTopic(t, west.Addr, "east.orders", tt.target, nil)
			produceSpreadSource(t, east.Addr, "orders", 0, 1500)
			section := fmt.Sprintf("include = [\"orders\"]\nrename = \"prefix\"\ngrow_partitions = %v\n", tt.grow)
			_, cfg := mirrorConfig(t, east.Addr, west.Addr, tt.mode, section)
			cfg.Mirror.ExactlyOnce = tt.eos

			// A group consumed part of the source: it must not be
			// translated onto the spread target.
			commitSourceGroup(t, east.Addr, "orders", "spread-readers")

			m := startMirror(t, cfg)
			if tt.skipped != "" {
				eventually(t, 20*time.Second, "the topic is skipped", func() error {
					why := m.Status().Skipped["orders"]
					if !strings.Contains(why, tt.skipped) {
						return fmt.Errorf("skip reason %q", why)
					}
					return nil
				})
				if n := sumOffsets(tryEndOffsets(west.Addr, "east.orders")); n != 0 {
					t.Fatalf("link wrote %d records into a topic with another partition count", n)
				}
				return
			}
			waitSpread(t, m, 1500)
			m.stop()
			produceSpreadSource(t, east.Addr, "orders", 1500, 1500)
			m = startMirror(t, cfg)
			waitSpread(t, m, 1500) // this session's records

			st := m.Status()
			if why := st.Untranslated["orders"]; !strings.Contains(why, "group offsets are not translated") {
				t.Fatalf("status Untranslated[orders] = %q", why)
			}
			if len(st.Skipped) != 0 {
				t.Fatalf("skipped: %v", st.Skipped)
			}
			checkSpread(t, east.Addr, west.Addr, tt.target, 3000)
			if offs := fetchGroupOffsetsOf(t, west.Addr, "spread-readers", "east.orders"); len(offs) != 0 {
				t.Fatalf("group offsets translated onto a spread topic: %v", offs)
			}
		})
	}
}

// commitSourceGroup commits offset 10 of every source partition for group.
func commitSourceGroup(t *testing.T, addr, topic, group string) {
	t.Helper()
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	offs := kadm.Offsets{}
	for p := int32(0); p < 6; p++ {
		offs.Add(kadm.Offset{Topic: topic, Partition: p, At: 10, LeaderEpoch: -1})
	}
	resp, err := adm.CommitOffsets(ctx, group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

// waitSpread waits until the mirror copied n records of its session and
// has no lag.
func waitSpread(t *testing.T, m *inProcessMirror, n int64) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%d records copied", n), func() error {
		st := m.Status()
		var got int64
		for _, p := range st.Partitions {
			got += p.Records
		}
		if got != n || st.Lag() != 0 || len(st.Partitions) != 6 {
			return fmt.Errorf("%d records, lag %d, %d partitions", got, st.Lag(), len(st.Partitions))
		}
		return nil
	})
}

// checkSpread compares the target with the source record by record.
func checkSpread(t *testing.T, source, target string, n int32, want int) {
	t.Helper()
	type origin struct {
		partition int32
		offset    int64
		key       string
		keyed     bool
	}
	src := readRaw(t, source, "orders", want)
	from := map[string]origin{}
	for _, r := range src {
		from[string(r.Value)] = origin{r.Partition, r.Offset, string(r.Key), r.Key != nil}
	}
	dst := readRaw(t, target, "east.orders", want)
	if len(dst) != len(src) {
		t.Fatalf("target holds %d records, the source %d", len(dst), len(src))
	}
	part := kgo.StickyKeyPartitioner(nil).ForTopic("east.orders")
	seen := map[string]bool{}
	// last source offset per (target partition, source partition, key)
	type lane struct {
		tp, sp int32
		key    string
	}
	last := map[lane]int64{}
	for _, r := range dst {
		v := string(r.Value)
		o, ok := from[v]
		if !ok {
			t.Fatalf("target %d@%d holds %q, not on the source", r.Partition, r.Offset, v)
		}
		if seen[v] {
			t.Fatalf("%q arrived twice", v)
		}
		seen[v] = true
		if (r.Key != nil) != o.keyed || string(r.Key) != o.key {
			t.Fatalf("%q: key %q, source key %q", v, r.Key, o.key)
		}
		want := o.partition % n
		if o.keyed {
			want = int32(part.Partition(&kgo.Record{Key: r.Key}, int(n)))
		}
		if r.Partition != want {
			t.Fatalf("%q (key %q) on target partition %d, want %d", v, r.Key, r.Partition, want)
		}
		if len(r.Headers) != 1 || r.Headers[0].Key != "seq" {
			t.Fatalf("%q: headers %v", v, r.Headers)
		}
		l := lane{r.Partition, o.partition, o.key}
		if prev, ok := last[l]; ok && prev >= o.offset {
			t.Fatalf("key %q of source partition %d out of order on target partition %d: source offset %d after %d",
				o.key, o.partition, r.Partition, o.offset, prev)
		}
		last[l] = o.offset
	}
}

// readRaw reads want records of topic (read_committed: transaction markers
// hold offsets but no records) in partition order, each partition in offset
// order, then checks that nothing more arrives within a short wait.
func readRaw(t *testing.T, addr, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	byPart := map[int32][]*kgo.Record{}
	got := 0
	poll := func(timeout time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		fs := cl.PollFetches(ctx)
		fs.EachError(func(_ string, p int32, err error) {
			if ctx.Err() == nil {
				t.Fatalf("reading %s[%d]: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			byPart[r.Partition] = append(byPart[r.Partition], r)
			got++
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for got < want {
		if time.Now().After(deadline) {
			t.Fatalf("reading %s: %d of %d records", topic, got, want)
		}
		poll(time.Second)
	}
	poll(300 * time.Millisecond)
	var out []*kgo.Record
	for p := int32(0); p < 16; p++ {
		out = append(out, byPart[p]...)
	}
	if len(out) != got {
		t.Fatalf("reading %s: records outside partitions 0-15", topic)
	}
	return out
}
