package tests

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/mirror"
)

// readCommittedValues reads every partition of topic read_committed until it
// holds want[p] records, returning their values in order.
func readCommittedValues(t *testing.T, addr, topic string, want map[int32]int, timeout time.Duration) map[int32][]string {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	for p := range want {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out := map[int32][]string{}
	complete := func() bool {
		for p, n := range want {
			if len(out[p]) < n {
				return false
			}
		}
		return true
	}
	for !complete() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			counts := map[int32]int{}
			for p, vs := range out {
				counts[p] = len(vs)
			}
			t.Fatalf("reading %s: %v records after %s, want %v", topic, counts, timeout, want)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("reading %s[%d]: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { out[r.Partition] = append(out[r.Partition], string(r.Value)) })
	}
	return out
}

// TestMirrorExactlyOnceCopy mirrors in copy mode with exactly_once while
// the mirror process is SIGKILLed three times mid-stream, with a
// transactional source whose aborted records must not be copied. A
// read_committed consumer of the target sees every committed source record
// once, in order: nothing lost, nothing duplicated.
func TestMirrorExactlyOnceCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	east := startBroker(t, fastLog)
	west := startBroker(t, fastLog)
	const parts, perRound, rounds = 3, 3000, 4
	createTopic(t, east.Addr, "orders", parts, nil)
	cfgPath, _ := mirrorConfig(t, east.Addr, west.Addr, mirror.ModeCopy, "")
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("exactly_once = true\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cfg, err := mirror.Load(cfgPath)
	if err != nil || !cfg.Mirror.ExactlyOnce {
		t.Fatalf("load %s: %v (exactly_once %v)", cfgPath, err, cfg.Mirror.ExactlyOnce)
	}

	// An aborted source transaction: its records never reach the target.
	txn, err := kgo.NewClient(kgo.SeedBrokers(east.Addr), kgo.TransactionalID("east-app"), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < parts; p++ {
		if err := txn.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("aborted")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}

	m := startChildMirror(t, cfgPath)
	for round := 0; round < rounds; round++ {
		produceMirrorRecords(t, east.Addr, "orders", round*perRound, perRound)
		if round == rounds-1 {
			break
		}
		// Kill once the target has part of this round: mid-stream.
		eventually(t, 30*time.Second, "the mirror makes progress", func() error {
			n := int64(0)
			for _, e := range tryEndOffsets(west.Addr, "east.orders") {
				n += e
			}
			if n < int64(round*perRound+perRound/3) {
				return fmt.Errorf("target ends sum to %d", n)
			}
			return nil
		})
		m.kill()
		m = startChildMirror(t, cfgPath)
	}

	// A last record per partition: any duplicate of earlier records
	// would come before it on the target and shift it.
	last, err := kgo.NewClient(kgo.SeedBrokers(east.Addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer last.Close()
	for p := int32(0); p < parts; p++ {
		if err := last.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("last")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// The source's committed records per partition: all but the aborted.
	srcVals := map[int32][]string{}
	{
		cl, err := kgo.NewClient(kgo.SeedBrokers(east.Addr), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		for total := 0; total < rounds*perRound+parts; {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("reading the source: %d of %d records", total, rounds*perRound+parts)
			}
			fs.EachRecord(func(r *kgo.Record) {
				srcVals[r.Partition] = append(srcVals[r.Partition], string(r.Value))
				total++
			})
		}
		cl.Close()
	}
	srcWant := map[int32]int{}
	for p, vs := range srcVals {
		srcWant[p] = len(vs)
	}
	got := readCommittedValues(t, west.Addr, "east.orders", srcWant, 60*time.Second)
	// The copies were committed in transactions: markers take offsets.
	for p, end := range endOffsets(t, west.Addr, "east.orders") {
		if end <= int64(len(got[p])) {
			t.Fatalf("partition %d ends at %d with %d records: no transaction markers", p, end, len(got[p]))
		}
	}
	for p := int32(0); p < parts; p++ {
		if len(got[p]) != len(srcVals[p]) || got[p][len(got[p])-1] != "last" {
			t.Fatalf("partition %d: %d records on the target, %d on the source, last %q", p, len(got[p]), len(srcVals[p]), got[p][len(got[p])-1])
		}
		for i := range got[p] {
			if got[p][i] != srcVals[p][i] {
				t.Fatalf("partition %d record %d: %q on the target, %q on the source (a duplicate or a loss)", p, i, got[p][i], srcVals[p][i])
			}
		}
	}
}
