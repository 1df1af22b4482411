package tests

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
)

// elrNode is one in-process node of TestEligibleLeaderReplicas that can be
// stopped (a controlled shutdown) and started again on its data dir.
type elrNode struct {
	cfg    config.Config
	addr   string
	cancel context.CancelFunc
	done   chan error
}

func (nd *elrNode) start(t *testing.T, logw *testLogWriter) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn})).With("node", nd.cfg.NodeID)
	srv, err := server.New(nd.cfg, server.Options{Logger: logger})
	if err != nil {
		t.Fatalf("node %d: server.New: %v", nd.cfg.NodeID, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	nd.addr, nd.cancel, nd.done = srv.KafkaAddr(), cancel, make(chan error, 1)
	go func() { nd.done <- srv.Run(ctx) }()
	waitForBroker(t, nd.addr, nd.done)
}

func (nd *elrNode) stop(t *testing.T) {
	if nd.cancel == nil {
		return
	}
	nd.cancel()
	nd.cancel = nil
	select {
	case err := <-nd.done:
		if err != nil {
			t.Errorf("node %d: Run returned %v", nd.cfg.NodeID, err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("node %d did not stop within 30s", nd.cfg.NodeID)
	}
}

// describePartition asks addr's DescribeTopicPartitions (API 75) for
// partition 0 of topic.
func describePartition(ctx context.Context, addr, topic string) (kmsg.DescribeTopicPartitionsResponseTopicPartition, error) {
	var none kmsg.DescribeTopicPartitionsResponseTopicPartition
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return none, err
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = topic
	req.Topics, req.ResponsePartitionLimit = append(req.Topics, rt), 10
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return none, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return none, fmt.Errorf("DescribeTopicPartitions answered %d topics", len(resp.Topics))
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		return none, err
	}
	return resp.Topics[0].Partitions[0], nil
}

// TestEligibleLeaderReplicas: RF=3 with min.insync.replicas 2 on brokers
// 1-3 (node 4 is the metadata quorum's only voter, so that three brokers
// can be down at once). The followers stop one by one; the one that leaves
// an ISR below min.insync.replicas becomes an eligible leader replica
// (DescribeTopicPartitions shows it), an acks=1 record is then
// acknowledged but not exposed (the high watermark waits for
// min.insync.replicas); the leader stops, comes back as after a crash and
// so leaves the ELR, the other ELR member comes back and is elected, and no
// acks=all record is lost.
func TestEligibleLeaderReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a four-node cluster")
	}
	const topic = "elr"
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop)
	voter := fmt.Sprintf("4@127.0.0.1:%d", freePort(t))
	nodes := map[int32]*elrNode{}
	for id := int32(1); id <= 4; id++ {
		cfg := config.Default()
		cfg.NodeID = id
		cfg.DataDir = t.TempDir()
		cfg.Listeners.Kafka = "127.0.0.1:0"
		cfg.Listeners.HTTP = ""
		cfg.Listeners.Controller = "127.0.0.1:0"
		if id == 4 {
			cfg.Listeners.Controller = strings.SplitN(voter, "@", 2)[1]
		}
		cfg.Cluster.Voters = []string{voter}
		cfg.Cluster.BrokerSessionTimeoutMs = 1500
		cfg.Cluster.BrokerHeartbeatIntervalMs = 100
		cfg.Cluster.ControlledShutdownTimeoutMs = 10000
		cfg.Replication.ReplicaLagTimeMaxMs = 3000
		cfg.Topics.AutoCreate = false
		nodes[id] = &elrNode{cfg: cfg}
	}
	// The voter first: the others register through it.
	started := make(chan struct{}, 4)
	for _, nd := range nodes {
		go func() {
			defer func() { started <- struct{}{} }()
			logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn})).With("node", nd.cfg.NodeID)
			srv, err := server.New(nd.cfg, server.Options{Logger: logger})
			if err != nil {
				t.Errorf("node %d: server.New: %v", nd.cfg.NodeID, err)
				return
			}
			ctx, cancel := context.WithCancel(context.Background())
			nd.addr, nd.cancel, nd.done = srv.KafkaAddr(), cancel, make(chan error, 1)
			go func() { nd.done <- srv.Run(ctx) }()
		}()
	}
	for range 4 {
		<-started
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.stop(t)
		}
	})
	for _, nd := range nodes {
		waitForBroker(t, nd.addr, nd.done)
	}
	ctrl := nodes[4].addr
	waitMetadata(t, ctrl, "4 brokers", func(md kadm.Metadata) bool { return len(md.Brokers) == 4 })

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(ctrl))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{1, 2, 3}
	ct.ReplicaAssignment = append(ct.ReplicaAssignment, ra)
	minISR := kmsg.NewCreateTopicsRequestTopicConfig()
	two := "2"
	minISR.Name, minISR.Value = "min.insync.replicas", &two
	ct.Configs = append(ct.Configs, minISR)
	create.Topics, create.TimeoutMillis = append(create.Topics, ct), 30000
	cresp, err := create.RequestWith(ctx, admCl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(cresp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}

	// waitPartition polls DescribeTopicPartitions on the voter until ok.
	waitPartition := func(what string, ok func(p kmsg.DescribeTopicPartitionsResponseTopicPartition) bool) kmsg.DescribeTopicPartitionsResponseTopicPartition {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			p, err := describePartition(ctx, ctrl, topic)
			if err == nil && ok(p) {
				return p
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s: last %+v, err %v", what, p, err)
			}
			time.Sleep(50 * time.Millisecond) // polling a remote condition, not synchronising
		}
	}
	waitPartition("leader 1 with ISR [1 2 3]", func(p kmsg.DescribeTopicPartitionsResponseTopicPartition) bool {
		return p.LeaderID == 1 && len(p.ISR) == 3
	})

	seeds := func(ids ...int32) []string {
		var out []string
		for _, id := range ids {
			out = append(out, nodes[id].addr)
		}
		return out
	}
	// produce writes n records named prefix-i with the given acks and
	// returns how many were acknowledged and the first error.
	produce := func(addrs []string, acks kgo.Acks, prefix string, n int, opts ...kgo.Opt) (int, error) {
		opts = append(opts, kgo.SeedBrokers(addrs...), kgo.RequiredAcks(acks),
			kgo.RecordDeliveryTimeout(10*time.Second), kgo.ProducerLinger(0))
		if acks != kgo.AllISRAcks() {
			opts = append(opts, kgo.DisableIdempotentWrite())
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return 0, err
		}
		defer cl.Close()
		acked := 0
		var first error
		for i := range n {
			r := &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			acked++
		}
		return acked, first
	}
	highWatermark := func(addrs []string) int64 {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := ends.Lookup(topic, 0)
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		return o.Offset
	}

	if n, err := produce(seeds(1, 2, 3), kgo.AllISRAcks(), "a", 50); n != 50 {
		t.Fatalf("acks=all with a full ISR: %d of 50 acknowledged: %v", n, err)
	}
	nodes[3].stop(t)
	waitPartition("ISR [1 2] after 3 stopped", func(p kmsg.DescribeTopicPartitionsResponseTopicPartition) bool {
		return slices.Equal(p.ISR, []int32{1, 2}) && len(p.EligibleLeaderReplicas) == 0
	})
	if n, err := produce(seeds(1, 2), kgo.AllISRAcks(), "b", 50); n != 50 {
		t.Fatalf("acks=all with ISR [1 2]: %d of 50 acknowledged: %v", n, err)
	}
	nodes[2].stop(t)
	p := waitPartition("ISR [1] and ELR [2] after 2 stopped", func(p kmsg.DescribeTopicPartitionsResponseTopicPartition) bool {
		return slices.Equal(p.ISR, []int32{1}) && slices.Equal(p.EligibleLeaderReplicas, []int32{2})
	})
	t.Logf("below min ISR: %+v", p)

	// Below min.insync.replicas: acks=all is refused, acks=1 acknowledged
	// but kept from consumers.
	if n, err := produce(seeds(1), kgo.AllISRAcks(), "x", 1, kgo.DisableIdempotentWrite(), kgo.RecordRetries(0)); n != 0 || !strings.Contains(fmt.Sprint(err), "NOT_ENOUGH_REPLICAS") {
		t.Fatalf("acks=all below min ISR: %d acknowledged, err %v; want NOT_ENOUGH_REPLICAS", n, err)
	}
	if n, err := produce(seeds(1), kgo.LeaderAck(), "c", 5); n != 5 {
		t.Fatalf("acks=1 below min ISR: %d of 5 acknowledged: %v", n, err)
	}
	if hw := highWatermark(seeds(1)); hw != 100 {
		t.Fatalf("high watermark %d after acks=1 records below min ISR, want 100 (the acks=all records only)", hw)
	}

	// The leader stops: leaderless, both replicas eligible.
	nodes[1].stop(t)
	p = waitPartition("leaderless with ELR [1 2]", func(p kmsg.DescribeTopicPartitionsResponseTopicPartition) bool {
		return p.LeaderID == -1 && len(p.ISR) == 0 && slices.Equal(p.EligibleLeaderReplicas, []int32{1, 2})
	})
	t.Logf("leaderless: %+v", p)

	// 1 comes back as after a crash (no clean-shutdown marker): its
	// registration's previous broker epoch is -1, so it leaves the ELR
	// and is not elected, though it was the last leader.
	if err := os.Remove(filepath.Join(nodes[1].cfg.DataDir, ".kafka_cleanshutdown")); err != nil {
		t.Fatalf("node 1 left no clean-shutdown marker: %v", err)
	}
	nodes[1].start(t, logw)
	p = waitPartition("1 out of the ELR after its unclean restart", func(p kmsg.DescribeTopicPartitionsResponseTopicPartition) bool {
		return p.LeaderID == -1 && len(p.ISR) == 0 && slices.Equal(p.EligibleLeaderReplicas, []int32{2})
	})
	t.Logf("after 1 restarted uncleanly: %+v", p)

	// The ELR member 2 comes back cleanly and is elected; 1 and 3 rejoin,
	// so the high watermark moves again.
	nodes[2].start(t, logw)
	p = waitPartition("leader 2 from the ELR", func(p kmsg.DescribeTopicPartitionsResponseTopicPartition) bool {
		return p.LeaderID == 2 && slices.Contains(p.ISR, 2) && len(p.EligibleLeaderReplicas) == 0
	})
	t.Logf("elected from the ELR: %+v", p)
	nodes[3].start(t, logw)
	waitPartition("ISR [2 1 3]", func(p kmsg.DescribeTopicPartitionsResponseTopicPartition) bool {
		return p.LeaderID == 2 && len(p.ISR) == 3 && len(p.EligibleLeaderReplicas) == 0
	})
	var hw int64
	deadline := time.Now().Add(30 * time.Second)
	for hw = highWatermark(seeds(2, 3)); hw < 100 && time.Now().Before(deadline); hw = highWatermark(seeds(2, 3)) {
		time.Sleep(50 * time.Millisecond) // polling a remote condition, not synchronising
	}
	if hw < 100 {
		t.Fatalf("high watermark %d on the new leader, want at least 100", hw)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(2, 3)...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]bool{}
	var read int64
	for read < hw {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading to %d: %v (read %d)", hw, ctx.Err(), read)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[string(r.Value)] = true
			read = r.Offset + 1
		})
	}
	var lost []string
	for _, prefix := range []string{"a", "b"} {
		for i := range 50 {
			if v := fmt.Sprintf("%s-%d", prefix, i); !got[v] {
				lost = append(lost, v)
			}
		}
	}
	if len(lost) > 0 {
		t.Fatalf("acks=all records lost across the ELR election: %v", lost)
	}
}
