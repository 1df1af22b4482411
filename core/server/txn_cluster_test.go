package server

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/group"
	"github.com/gregorbroker/gregor/core/txn"
)

// startTxnCluster runs three plaintext nodes in this process with small
// internal topics and returns their Kafka addresses. The nodes stop when
// the test ends.
func startTxnCluster(t *testing.T) []string {
	t.Helper()
	servers := startTestCluster(t, 3, func(_ int32, cfg *config.Config) {
		cfg.Transactions.StateLogPartitions = 6
		cfg.Groups.OffsetsTopicPartitions = 6
	})
	var seeds []string
	for id := int32(1); id <= 3; id++ {
		seeds = append(seeds, servers[id].KafkaAddr())
	}
	return seeds
}

// Transactions span brokers: the coordinator of the transactional id leads
// only some of the partitions written, so the others are verified (or
// added, for transaction version 2) by their leaders with AddPartitionsToTxn
// to the coordinator, and their markers are sent with WriteTxnMarkers to
// their leaders. A committed, an aborted and a second committed
// transaction over six partitions leave a read_committed reader exactly
// the committed records, and the last stable offset at the end of every
// partition. It runs for the current protocol (Produce v12+, KIP-890 part 2)
// and for a Kafka 3.7 client (explicit AddPartitionsToTxn, part 1
// verification).
func TestTransactionsAcrossBrokers(t *testing.T) {
	seeds := startTxnCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	poll(t, ctx, "three brokers registered", func() error {
		bs, err := adm.ListBrokers(ctx)
		if err == nil && len(bs) != 3 {
			err = fmt.Errorf("%d brokers", len(bs))
		}
		return err
	})
	for _, tc := range []struct {
		name     string
		versions *kversion.Versions
	}{
		{"current", nil},
		{"kafka-3.7", kversion.V3_7_0()},
	} {
		t.Run(tc.name, func(t *testing.T) { testTxnAcrossBrokers(t, ctx, adm, seeds, tc.name, tc.versions) })
	}
	t.Run("group-transact", func(t *testing.T) { testGroupTransactAcrossBrokers(t, ctx, admCl, seeds, "txn-spread-current") })
}

// testGroupTransactAcrossBrokers copies the committed records of in to a
// new topic with a GroupTransactSession whose group's __consumer_offsets
// partition is led by another broker than its transaction coordinator, so
// TxnOffsetCommit goes to the group coordinator and the commit marker to
// __consumer_offsets is a remote one. The group's offsets appear only with
// the commit, and the output holds every input record once.
func testGroupTransactAcrossBrokers(t *testing.T, ctx context.Context, admCl *kgo.Client, seeds []string, in string) {
	const parts, records = 6, 6 * 10
	adm := kadm.NewClient(admCl)
	out := "txn-gts-out"
	if r, err := adm.CreateTopic(ctx, parts, 3, nil, out); err != nil {
		t.Fatalf("create topic: %v (%s)", err, r.ErrMessage)
	}
	// Looking up the coordinators creates the internal topics.
	const txnID = "gts"
	for typ, key := range map[int8]string{0: "probe", 1: txnID} {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorType, fc.CoordinatorKeys = typ, []string{key}
		if _, err := fc.RequestWith(ctx, admCl); err != nil {
			t.Fatal(err)
		}
	}
	var groupID string
	poll(t, ctx, "a group whose coordinator is not the transaction coordinator", func() error {
		md, err := adm.Metadata(ctx, txn.StateTopic, group.OffsetsTopic)
		if err != nil {
			return err
		}
		st, ot := md.Topics[txn.StateTopic], md.Topics[group.OffsetsTopic]
		if len(st.Partitions) == 0 || len(ot.Partitions) == 0 {
			return fmt.Errorf("internal topics have %d and %d partitions", len(st.Partitions), len(ot.Partitions))
		}
		tc := st.Partitions[txn.PartitionFor(txnID, int32(len(st.Partitions)))].Leader
		for i := range 100 {
			g := "gts-group-" + strconv.Itoa(i)
			if gc := ot.Partitions[group.PartitionFor(g, int32(len(ot.Partitions)))].Leader; gc >= 0 && tc >= 0 && gc != tc {
				groupID = g
				t.Logf("transaction coordinator %d, group coordinator %d (%s)", tc, gc, g)
				return nil
			}
		}
		return fmt.Errorf("no group led away from broker %d", tc)
	})
	sess, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(seeds...), kgo.TransactionalID(txnID),
		kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(in), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.DefaultProduceTopic(out),
		kgo.TransactionTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	copied := 0
	for copied < records {
		fs := sess.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume after %d records: %v", copied, err)
		}
		if err := sess.Begin(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, &kgo.Record{Partition: r.Partition, Value: r.Value})
		})
		if err := sess.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil || !committed {
			t.Fatalf("end: committed %v, %v", committed, err)
		}
		copied += len(recs)
	}
	if copied != records {
		t.Fatalf("copied %d records, want %d", copied, records)
	}
	// The committed offsets point past every partition's last record
	// (offset 16; 17 is the last marker).
	offs, err := adm.FetchOffsets(ctx, groupID)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(parts) {
		if o, ok := offs.Lookup(in, p); !ok || o.Err != nil || o.At != 17 {
			t.Errorf("group %s offset of %s-%d: %+v (found %v), want 17", groupID, in, p, o, ok)
		}
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(out),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	seen := map[string]int{}
	for n := 0; n < records; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume output after %d records: %v", n, err)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++; n++ })
	}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("output holds %q %d times", v, c)
		}
	}
	if len(seen) != records {
		t.Errorf("output holds %d distinct records, want %d", len(seen), records)
	}
}

func testTxnAcrossBrokers(t *testing.T, ctx context.Context, adm *kadm.Client, seeds []string, name string, versions *kversion.Versions) {
	const parts, perTxn = 6, 5
	topic := "txn-spread-" + name
	two := "2"
	if r, err := adm.CreateTopic(ctx, parts, 3, map[string]*string{"min.insync.replicas": &two}, topic); err != nil {
		t.Fatalf("create topic: %v (%s)", err, r.ErrMessage)
	}
	txnID := "spread-" + name
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.TransactionalID(txnID), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(20 * time.Second)}
	if versions != nil {
		opts = append(opts, kgo.MaxVersions(versions))
	}
	prod, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()

	// run writes one transaction of perTxn records to every partition and
	// ends it; values are "<label>-<partition>-<i>".
	run := func(label string, commit kgo.TransactionEndTry) {
		t.Helper()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatalf("%s: begin: %v", label, err)
		}
		var recs []*kgo.Record
		for p := range int32(parts) {
			for i := range perTxn {
				recs = append(recs, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d", label, p, i)})
			}
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("%s: produce: %v", label, err)
		}
		if err := prod.EndTransaction(ctx, commit); err != nil {
			t.Fatalf("%s: end: %v", label, err)
		}
	}
	run("c1", kgo.TryCommit)
	run("a1", kgo.TryAbort)
	run("c2", kgo.TryCommit)

	// The coordinator must not lead every partition, or nothing remote was
	// exercised.
	md, err := adm.Metadata(ctx, txn.StateTopic, topic)
	if err != nil {
		t.Fatal(err)
	}
	state := md.Topics[txn.StateTopic]
	if state.Err != nil || len(state.Partitions) == 0 {
		t.Fatalf("%s: %v, %d partitions", txn.StateTopic, state.Err, len(state.Partitions))
	}
	coordinator := state.Partitions[txn.PartitionFor(txnID, int32(len(state.Partitions)))].Leader
	remote := 0
	for _, p := range md.Topics[topic].Partitions {
		if p.Leader != coordinator {
			remote++
		}
	}
	if remote == 0 {
		t.Fatalf("coordinator %d leads all %d partitions; no remote marker or verification was needed", coordinator, parts)
	}
	t.Logf("coordinator %d; %d of %d partitions led by other brokers", coordinator, remote, parts)

	// The last stable offset reaches the end of every partition: three
	// transactions of perTxn records and a marker each.
	const end = 3 * (perTxn + 1)
	poll(t, ctx, "last stable offset at the end", func() error {
		lso, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			return err
		}
		for p := range int32(parts) {
			o, ok := lso.Lookup(topic, p)
			if !ok || o.Err != nil || o.Offset != end {
				return fmt.Errorf("partition %d: last stable offset %d (%v), want %d", p, o.Offset, o.Err, end)
			}
		}
		return nil
	})

	cons, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := map[int32][]string{}
	total := 0
	for total < parts*2*perTxn {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume after %d records: %v", total, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], string(r.Value))
			total++
		})
	}
	for p := range int32(parts) {
		var want []string
		for _, label := range []string{"c1", "c2"} {
			for i := range perTxn {
				want = append(want, label+"-"+strconv.Itoa(int(p))+"-"+strconv.Itoa(i))
			}
		}
		if fmt.Sprint(got[p]) != fmt.Sprint(want) {
			t.Errorf("partition %d read_committed: %v, want %v", p, got[p], want)
		}
	}
}
