package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/mirror"
)

const (
	mirrorPartitions = 6
	mirrorRecords    = 50000
	// preloaded records on the copy target shift its offsets, so that
	// translation is visible.
	preloaded = 10
)

func fastLog(c *config.Config) {
	c.Log.Durability = config.DurabilityPageCache
	groupConfig(c)
}

// TestMirrorCopyFailover mirrors 50,000 records over 6 partitions in copy
// mode into a target whose topic already holds records (so target offsets
// differ), while the mirror is killed with SIGKILL and restarted and the
// source broker is restarted. Per-partition order and content match with
// nothing lost or duplicated; a group that consumed half on the source
// resumes on the target with no skipped and no redelivered record; a topic
// created on the source after start is picked up.
func TestMirrorCopyFailover(t *testing.T) {
	runMirrorScenario(t, mirror.ModeCopy)
}

// TestMirrorLinkFailover is the same scenario in link mode: target offsets
// are the source's.
func TestMirrorLinkFailover(t *testing.T) {
	runMirrorScenario(t, mirror.ModeLink)
}

func runMirrorScenario(t *testing.T, mode string) {
	if testing.Short() {
		t.Skip("integration")
	}
	east := startFixedPortBroker(t)
	west := startBroker(t, fastLog)
	createTopic(t, east.Addr, "orders", mirrorPartitions, nil)
	shift := int64(0)
	if mode == mirror.ModeCopy {
		createTopic(t, west.Addr, "east.orders", mirrorPartitions, nil)
		produceToEach(t, west.Addr, "east.orders", mirrorPartitions, preloaded)
		shift = preloaded
	}
	produceMirrorRecords(t, east.Addr, "orders", 0, mirrorRecords/2)

	cfgPath, _ := mirrorConfig(t, east.Addr, west.Addr, mode, "")
	m := startChildMirror(t, cfgPath)
	eventually(t, 60*time.Second, "the first records reach the target", func() error {
		var n int64
		for _, e := range tryEndOffsets(west.Addr, "east.orders") {
			n += e - shift
		}
		if n < 2000 {
			return fmt.Errorf("%d records mirrored", n)
		}
		return nil
	})
	m.kill()
	produceMirrorRecords(t, east.Addr, "orders", mirrorRecords/2, mirrorRecords/2)
	m = startChildMirror(t, cfgPath)

	// A group reads half of the records on the source and commits.
	consumed := consumeHalfInGroup(t, east.Addr, "orders", "billing", mirrorRecords/2)

	// The source restarts under the mirror; then a new topic appears.
	east.Stop()
	east.Start()
	createTopic(t, east.Addr, "orders.new", 2, nil)
	produceMirrorRecords(t, east.Addr, "orders.new", 0, 100)

	srcEnds := endOffsets(t, east.Addr, "orders")
	want := map[int32]int64{}
	for p, e := range srcEnds {
		want[p] = e + shift
	}
	waitMirrored(t, west.Addr, "east.orders", want, 90*time.Second)
	waitMirrored(t, west.Addr, "east.orders.new", endOffsets(t, east.Addr, "orders.new"), 60*time.Second)

	src := readPartitions(t, east.Addr, "orders", srcEnds)
	dst := readPartitions(t, west.Addr, "east.orders", want)
	for p := int32(0); p < mirrorPartitions; p++ {
		s, d := src[p], dst[p][shift:]
		if len(s) != len(d) {
			t.Fatalf("partition %d: source %d records, target %d (after %d preloaded)", p, len(s), len(d), shift)
		}
		for i := range s {
			a, b := s[i], d[i]
			if a.Key != b.Key || a.Value != b.Value || a.Headers != b.Headers || a.Timestamp != b.Timestamp {
				t.Fatalf("partition %d record %d: source %+v, target %+v", p, i, a, b)
			}
			if b.Offset != a.Offset+shift {
				t.Fatalf("partition %d record %d: source offset %d at target offset %d, want %d", p, i, a.Offset, b.Offset, a.Offset+shift)
			}
		}
	}

	// The mirror syncs the group's offsets into the idle target group.
	eventually(t, 30*time.Second, "group offsets synced to the target", func() error {
		got := fetchGroupOffsetsOf(t, west.Addr, "billing", "east.orders")
		for p, c := range consumed {
			if got[p] != c+shift {
				return fmt.Errorf("partition %d: target committed %d, want %d (source %d)", p, got[p], c+shift, c)
			}
		}
		return nil
	})
	m.kill()

	// Failover: the group resumes on the target exactly where it stopped.
	resumed := consumeRestInGroup(t, west.Addr, "east.orders", "billing", mirrorRecords-mirrorRecords/2)
	for p, recs := range resumed {
		if len(recs) == 0 {
			continue
		}
		first := recs[0]
		wantFirst := src[p][consumed[p]]
		if first.Value != wantFirst.Value {
			t.Fatalf("partition %d: the group resumed at %q, want %q (source offset %d)", p, first.Value, wantFirst.Value, consumed[p])
		}
		if int64(len(recs)) != int64(len(src[p]))-consumed[p] {
			t.Fatalf("partition %d: %d records after failover, want %d", p, len(recs), int64(len(src[p]))-consumed[p])
		}
	}

	// Bookkeeping topics as MirrorMaker 2 keeps them.
	for _, topic := range []string{mirror.HeartbeatsTopic, mirror.CheckpointsTopic("east")} {
		ends := endOffsets(t, west.Addr, topic)
		if ends[0] == 0 {
			t.Errorf("%s is empty", topic)
		}
	}
}

// consumeHalfInGroup reads n records of topic in group and commits them;
// it returns the committed offsets per partition.
func consumeHalfInGroup(t *testing.T, addr, topic, group string, n int) map[int32]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond), kgo.FetchMaxPartitionBytes(4096))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	next := map[int32]int64{}
	got := 0
	for got < n {
		fs := cl.PollRecords(ctx, n-got)
		if ctx.Err() != nil {
			t.Fatalf("group %s read %d of %d records", group, got, n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next[r.Partition] = r.Offset + 1
			got++
		})
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	return next
}

// consumeRestInGroup reads n records of topic as a member of group.
func consumeRestInGroup(t *testing.T, addr, topic, group string, n int) map[int32][]mirrorRecord {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := map[int32][]mirrorRecord{}
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("group %s read %d of %d records on %s", group, got, n, topic)
		}
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], mirrorRecord{Offset: r.Offset, Value: string(r.Value)})
			got++
		})
	}
	// Nothing more may come: more would be redelivered records.
	extra, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	fs := cl.PollFetches(extra)
	fs.EachRecord(func(r *kgo.Record) {
		t.Errorf("extra record after failover: %s[%d]@%d %q", r.Topic, r.Partition, r.Offset, r.Value)
	})
	return out
}

// fetchGroupOffsetsOf returns a group's committed offsets on one topic.
func fetchGroupOffsetsOf(t *testing.T, addr, group, topic string) map[int32]int64 {
	t.Helper()
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := adm.FetchOffsets(ctx, group)
	out := map[int32]int64{}
	if err != nil || resp.Error() != nil {
		return out
	}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			out[o.Partition] = o.At
		}
	})
	return out
}
