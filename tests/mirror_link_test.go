package tests

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/mirror"
)

// linkBatch identifies a stored batch: the CRC covers everything but the
// base offset and leader epoch, so equal lists mean equal logs.
type linkBatch struct {
	Base, Last int64
	CRC        uint32
	Records    int32
	Control    bool
}

// linkView is a partition as a link must reproduce it. LogStart is the
// first offset a consumer can read: the log start offset or, when it lies
// in a gap, the first batch's base offset.
type linkView struct {
	LogStart, HighWatermark, LastStable int64
	Batches                             []linkBatch
	Aborted                             []string
}

// readLinkView fetches partition 0 of topic batch by batch, as stored
// (read_uncommitted), and lists the aborted transactions a read_committed
// fetch from the log start reports.
func readLinkView(t *testing.T, addr, topic string) linkView {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	td, err := newAdminFor(cl).ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("metadata of %s: %v %v", topic, err, td[topic].Err)
	}
	fetch := func(offset int64, isolation int8) kmsg.FetchResponseTopicPartition {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxBytes, req.IsolationLevel, req.SessionEpoch = -1, 1<<20, isolation, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, td[topic].ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = offset, 1<<20, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("fetch %s at %d: %v", topic, offset, err)
		}
		fp := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(fp.ErrorCode); err != nil {
			t.Fatalf("fetch %s at %d: %v", topic, offset, err)
		}
		return fp
	}
	starts, err := newAdminFor(cl).ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := starts.Lookup(topic, 0)
	v := linkView{LogStart: start.Offset}
	first := fetch(v.LogStart, 1)
	v.HighWatermark, v.LastStable = first.HighWatermark, first.LastStableOffset
	for _, a := range first.AbortedTransactions {
		v.Aborted = append(v.Aborted, fmt.Sprintf("%d@%d", a.ProducerID, a.FirstOffset))
	}
	for pos := v.LogStart; pos < v.HighWatermark; {
		fp := fetch(pos, 0)
		it := record.Batches(fp.RecordBatches)
		moved := false
		for it.Next() {
			h := it.Header()
			if h.LastOffset() < pos {
				continue
			}
			v.Batches = append(v.Batches, linkBatch{h.BaseOffset, h.LastOffset(), h.CRC, h.NumRecords, h.IsControl()})
			pos, moved = h.NextOffset(), true
		}
		if !moved {
			t.Fatalf("%s: no batch at %d below the high watermark %d", topic, pos, v.HighWatermark)
		}
	}
	if len(v.Batches) > 0 && v.Batches[0].Base > v.LogStart {
		// A compacted source may keep its log start below its first
		// batch; a link's empty target starts at that batch. Consumers
		// from the earliest offset read the same records either way.
		v.LogStart = v.Batches[0].Base
	}
	return v
}

// TestMirrorLinkPreservesEverything links three sources a produce-based
// link could not copy: a compacted topic (offset gaps, rewritten batches),
// a transactional one (committed and aborted transactions, markers) and
// one whose head was deleted (log start above zero). The target holds the
// same batches at the same offsets with the same log start, high watermark,
// last stable offset and aborted transactions; ordinary produce to it is
// refused until it is promoted, after which it continues at the source's
// end.
func TestMirrorLinkPreservesEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	east := startBroker(t, fastLog, func(c *config.Config) { c.Log.CleanerBackoffMs = 20 })
	west := startBroker(t, fastLog)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Compacted: ten keys rewritten eight times, then filler that rolls
	// them out of the active segment so the cleaner can rewrite them.
	createTopic(t, east.Addr, "orders.compacted", 1, map[string]*string{
		"cleanup.policy": strp("compact"), "segment.bytes": strp("2048")})
	pcl, err := kgo.NewClient(kgo.SeedBrokers(east.Addr), kgo.DefaultProduceTopic("orders.compacted"))
	if err != nil {
		t.Fatal(err)
	}
	defer pcl.Close()
	for round := 0; round < 8; round++ {
		var rs []*kgo.Record
		for i := 0; i < 10; i++ {
			rs = append(rs, &kgo.Record{Key: []byte(fmt.Sprint("key-", i)), Value: []byte(fmt.Sprint("v", round))})
		}
		if err := pcl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 40; i++ {
		if err := pcl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint("filler-", i)), Value: make([]byte, 100)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the source is compacted", func() error {
		v := readLinkView(t, east.Addr, "orders.compacted")
		n := int64(0)
		for _, b := range v.Batches {
			n += int64(b.Records)
		}
		if n >= v.HighWatermark {
			return fmt.Errorf("%d records up to %d", n, v.HighWatermark)
		}
		return nil
	})

	// Transactional: committed, aborted and committed transactions, each
	// followed by plain records.
	createTopic(t, east.Addr, "orders.txn", 1, nil)
	txn, err := kgo.NewClient(kgo.SeedBrokers(east.Addr), kgo.TransactionalID("ledger"),
		kgo.DefaultProduceTopic("orders.txn"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	for i, commit := range []bool{true, false, true} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 5; j++ {
			if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("txn-%d-%d", i, j))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		produceMirrorRecords(t, east.Addr, "orders.txn", i*3, 3)
	}

	// Partly deleted: the first 40 of 100 records are gone.
	createTopic(t, east.Addr, "orders.trimmed", 1, nil)
	produceMirrorRecords(t, east.Addr, "orders.trimmed", 0, 100)
	deleteBefore(t, east.Addr, "orders.trimmed", 0, 40)

	_, cfg := mirrorConfig(t, east.Addr, west.Addr, mirror.ModeLink, "")
	m := startMirror(t, cfg)
	for _, topic := range []string{"orders.compacted", "orders.txn", "orders.trimmed"} {
		ends := endOffsets(t, east.Addr, topic)
		waitMirrored(t, west.Addr, "east."+topic, ends, 30*time.Second)
	}
	for _, topic := range []string{"orders.compacted", "orders.txn", "orders.trimmed"} {
		src, dst := readLinkView(t, east.Addr, topic), readLinkView(t, west.Addr, "east."+topic)
		if !reflect.DeepEqual(src, dst) {
			t.Fatalf("%s differs on the target:\nsource %+v\ntarget %+v", topic, src, dst)
		}
		if ps, _ := partitionStatus(m, topic, 0); ps.Error != "" {
			t.Fatalf("%s: status error %q", topic, ps.Error)
		}
	}
	if v := readLinkView(t, west.Addr, "east.orders.trimmed"); v.LogStart != 40 || v.HighWatermark != 100 {
		t.Fatalf("trimmed mirror holds %d to %d, want 40 to 100", v.LogStart, v.HighWatermark)
	}
	if v := readLinkView(t, west.Addr, "east.orders.txn"); len(v.Aborted) != 1 {
		t.Fatalf("txn mirror lists aborted transactions %v, want one", v.Aborted)
	}

	// The mirror is read-only until promoted.
	wcl, err := kgo.NewClient(kgo.SeedBrokers(west.Addr), kgo.DefaultProduceTopic("east.orders.txn"),
		kgo.RecordRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer wcl.Close()
	err = wcl.ProduceSync(ctx, &kgo.Record{Value: []byte("local")}).FirstErr()
	if !errors.Is(err, kerr.PolicyViolation) {
		t.Fatalf("produce to a mirror topic: %v, want POLICY_VIOLATION", err)
	}
	end := endOffsets(t, west.Addr, "east.orders.txn")[0]
	if _, err := mirror.Promote(ctx, cfg, []string{"east.orders.txn"}, 20*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	// A new producer: the refused one's idempotent session ended in error.
	wcl2, err := kgo.NewClient(kgo.SeedBrokers(west.Addr), kgo.DefaultProduceTopic("east.orders.txn"))
	if err != nil {
		t.Fatal(err)
	}
	defer wcl2.Close()
	r := &kgo.Record{Value: []byte("local")}
	if err := wcl2.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Fatalf("produce after promotion: %v", err)
	}
	if r.Offset != end {
		t.Fatalf("first record after promotion at %d, want the source's end %d", r.Offset, end)
	}
}
