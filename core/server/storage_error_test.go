package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/log/vfs/errorfs"
	"github.com/gregorbroker/gregor/core/record"
)

// startServerFS runs one node whose logs live on fsys.
func startServerFS(t *testing.T, dataDir string, fsys *errorfs.FS) (*Server, func()) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = ""
	o := Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if fsys != nil {
		o.LogFS = fsys
	}
	srv, err := New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	return srv, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}
}

// rawProduce sends one acks=all batch of one record to topic-0 and returns
// the partition's error code.
func rawProduce(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, id [16]byte, value string) int16 {
	t.Helper()
	batch, err := record.Encode(record.BatchSpec{FirstTimestamp: time.Now().UnixMilli(), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]record.Record{{Value: []byte(value)}})
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// rawFetch fetches topic-0 from offset 0 and returns the partition's error
// code.
func rawFetch(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, id [16]byte) int16 {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MaxBytes = 10, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// A write error answers KAFKA_STORAGE_ERROR to the producer whose batch
// failed, and the partition never acknowledges or serves anything again
// until the broker restarts: Produce, Fetch and ListOffsets answer
// KAFKA_STORAGE_ERROR (or, once the controller took the partition's only
// replica out, NOT_LEADER_OR_FOLLOWER, as for Kafka's offline partitions).
// After a restart on a working disk everything acknowledged is there.
func TestStorageErrorAnswersKafkaStorageError(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule errorfs.Rule
		// torn: the failed batch is cut off; otherwise it may survive
		// in the page cache, unacknowledged, as in Kafka.
		torn bool
	}{
		// The fsync of the next acks=all batch fails: it was not made
		// durable and must not be acknowledged.
		{"fsync-EIO", errorfs.Rule{Ops: errorfs.OpSync, Path: "disk-0", Err: syscall.EIO, Times: 1}, false},
		// The disk fills up in the middle of the next batch.
		{"write-ENOSPC", errorfs.Rule{Ops: errorfs.OpWrite, Path: "disk-0", Err: syscall.ENOSPC, Partial: true, Times: 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) { testStorageError(t, tc.rule, tc.torn) })
	}
}

func testStorageError(t *testing.T, rule errorfs.Rule, torn bool) {
	dir := t.TempDir()
	fsys := errorfs.New(nil)
	srv, stop := startServerFS(t, dir, fsys)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.KafkaAddr()), kgo.DefaultProduceTopic("disk"))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "disk"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := cl.ProduceSync(ctx, kgo.StringRecord(fmt.Sprint("acked-", i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	details, err := adm.ListTopics(ctx, "disk")
	if err != nil {
		t.Fatal(err)
	}
	topicID := details["disk"].ID

	fsys.Add(rule)
	if code := rawProduce(t, ctx, cl, "disk", topicID, "lost"); code != kerr.KafkaStorageError.Code {
		t.Fatalf("produce on the fault: %v, want KAFKA_STORAGE_ERROR", kerr.ErrorForCode(code))
	}
	offline := []int16{kerr.KafkaStorageError.Code, kerr.NotLeaderForPartition.Code}
	leaderless := []int16{kerr.KafkaStorageError.Code, kerr.NotLeaderForPartition.Code, kerr.LeaderNotAvailable.Code}
	// The disk "works" again; the partition stays offline.
	for i := 0; i < 3; i++ {
		if code := rawProduce(t, ctx, cl, "disk", topicID, "after"); !slices.Contains(offline, code) {
			t.Fatalf("produce after the storage error: %v, want KAFKA_STORAGE_ERROR", kerr.ErrorForCode(code))
		}
		if code := rawFetch(t, ctx, cl, "disk", topicID); !slices.Contains(offline, code) {
			t.Fatalf("fetch after the storage error: %v, want KAFKA_STORAGE_ERROR", kerr.ErrorForCode(code))
		}
		// Through the client's metadata a partition already taken offline
		// has no leader at all.
		ends, err := adm.ListEndOffsets(ctx, "disk")
		if err == nil {
			o, _ := ends.Lookup("disk", 0)
			err = o.Err
		}
		var ke *kerr.Error
		if !errors.As(err, &ke) || !slices.Contains(leaderless, ke.Code) {
			t.Fatalf("list offsets after the storage error: %v, want KAFKA_STORAGE_ERROR", err)
		}
	}
	cl.Close()
	stop()

	srv2, stop2 := startServerFS(t, dir, nil)
	defer stop2()
	cl2, err := kgo.NewClient(kgo.SeedBrokers(srv2.KafkaAddr()), kgo.ConsumeTopics("disk"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	var got []string
	for len(got) < 5 {
		fs := cl2.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %v after restart: %v", got, err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i := 0; i < 5; i++ {
		if got[i] != fmt.Sprint("acked-", i) {
			t.Fatalf("after restart: %v, want the five acknowledged records first", got)
		}
	}
	// Nothing torn is served: the end offset is that of whole batches.
	ends, err := kadm.NewClient(cl2).ListEndOffsets(ctx, "disk")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("disk", 0); o.Err != nil || o.Offset < 5 || o.Offset > 6 || (torn && o.Offset != 5) {
		t.Fatalf("end offset after restart: %d %v, want 5 (or 6 with an unacknowledged whole batch)", o.Offset, o.Err)
	}
	if err := cl2.ProduceSync(ctx, &kgo.Record{Topic: "disk", Value: []byte("again")}).FirstErr(); err != nil {
		t.Fatalf("produce after restart: %v", err)
	}
}

// On three nodes, the leader's disk fails while producers write with
// acks=all: the controller moves leadership to another in-sync replica and
// removes the failed broker from the ISR, producing goes on, and every
// acknowledged record is on the new leader.
func TestLeaderDiskFailureMovesLeadership(t *testing.T) {
	fss := map[int32]*errorfs.FS{1: errorfs.New(nil), 2: errorfs.New(nil), 3: errorfs.New(nil)}
	servers := startTestClusterOpts(t, 3, nil, func(id int32, o *Options) { o.LogFS = fss[id] })
	var seeds []string
	for id := int32(1); id <= 3; id++ {
		seeds = append(seeds, servers[id].KafkaAddr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
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
	const topic = "failover"
	if r, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": strPtr("2")}, topic); err != nil {
		t.Fatalf("create topic: %v (%s)", err, r.ErrMessage)
	}
	var leader int32 = -1
	poll(t, ctx, "a leader with a full ISR", func() error {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		p := md.Topics[topic].Partitions[0]
		if p.Leader < 0 || len(p.ISR) != 3 {
			return fmt.Errorf("leader %d ISR %v", p.Leader, p.ISR)
		}
		leader = p.Leader
		return nil
	})

	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var (
		mu    sync.Mutex
		acked = map[string]bool{}
	)
	produce := func(from, n int) {
		var wg sync.WaitGroup
		for i := from; i < from+n; i++ {
			wg.Add(1)
			v := fmt.Sprint("r-", i)
			prod.Produce(ctx, kgo.StringRecord(v), func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err == nil {
					mu.Lock()
					acked[v] = true
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	produce(0, 50)
	// The leader's disk fails: every write and fsync of its data dir.
	fss[leader].Add(errorfs.Rule{Ops: errorfs.OpWrite | errorfs.OpSync, Err: syscall.EIO})
	produce(50, 100)

	var newLeader int32
	poll(t, ctx, "leadership moved off the failed broker", func() error {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		p := md.Topics[topic].Partitions[0]
		if p.Leader < 0 || p.Leader == leader || slices.Contains(p.ISR, leader) || !slices.Contains(p.OfflineReplicas, leader) {
			return fmt.Errorf("leader %d ISR %v offline replicas %v (failed broker %d)", p.Leader, p.ISR, p.OfflineReplicas, leader)
		}
		newLeader = p.Leader
		return nil
	})
	produce(150, 50)
	t.Logf("disk of broker %d failed; leader now %d; %d records acknowledged", leader, newLeader, len(acked))
	if len(acked) < 100 {
		t.Fatalf("only %d of 200 records acknowledged; producing did not go on", len(acked))
	}

	// Read everything back from the cluster (the new leader).
	cons, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	if end.Err != nil {
		t.Fatal(end.Err)
	}
	seen := map[string]bool{}
	var read int64
	for read < end.Offset {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d: %v", read, end.Offset, err)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true; read = r.Offset + 1 })
	}
	for v := range acked {
		if !seen[v] {
			t.Errorf("acknowledged record %s lost after the leader's disk failed", v)
		}
	}
}
