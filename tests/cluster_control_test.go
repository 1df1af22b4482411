package tests

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
)

// clusterNode is one node of an in-process multi-node cluster.
type clusterNode struct {
	id     int32
	addr   string
	ctrl   string // the controller listener
	cancel context.CancelFunc
	done   chan error
}

// startCluster starts n controller+broker nodes on loopback with short
// broker sessions, and waits until each answers Metadata listing all n.
func startCluster(t *testing.T, n int, modify ...func(*config.Config)) map[int32]*clusterNode {
	t.Helper()
	return startClusterTuned(t, n, func(c *config.Config) {
		for _, m := range modify {
			m(c)
		}
	})
}

// startClusterTuned is startCluster; tune adjusts every node's config
// before it starts.
func startClusterTuned(t *testing.T, n int, tune func(*config.Config)) map[int32]*clusterNode {
	t.Helper()
	return startClusterWith(t, n, tune, nil)
}

// startClusterWith is startClusterTuned; opts, when set, gives each node's
// server.Options (in-process extensions), whose Logger is set here.
func startClusterWith(t *testing.T, n int, tune func(*config.Config), opts func(id int32) server.Options) map[int32]*clusterNode {
	t.Helper()
	var voters []string
	for id := 1; id <= n; id++ {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", id, freePort(t)))
	}
	nodes := map[int32]*clusterNode{}
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop)
	for id := int32(1); id <= int32(n); id++ {
		cfg := config.Default()
		cfg.NodeID = id
		cfg.DataDir = t.TempDir()
		cfg.Listeners.Kafka = "127.0.0.1:0"
		cfg.Listeners.HTTP = ""
		cfg.Listeners.Controller = strings.SplitN(voters[id-1], "@", 2)[1]
		cfg.Cluster.Voters = voters
		cfg.Cluster.BrokerSessionTimeoutMs = 1500
		cfg.Cluster.BrokerHeartbeatIntervalMs = 100
		cfg.Cluster.ControlledShutdownTimeoutMs = 10000
		if tune != nil {
			tune(&cfg)
		}
		logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn})).With("node", id)
		var o server.Options
		if opts != nil {
			o = opts(id)
		}
		o.Logger = logger
		srv, err := server.New(cfg, o)
		if err != nil {
			t.Fatalf("node %d: server.New: %v", id, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		node := &clusterNode{id: id, addr: srv.KafkaAddr(), ctrl: cfg.Listeners.Controller, cancel: cancel, done: make(chan error, 1)}
		go func() { node.done <- srv.Run(ctx) }()
		nodes[id] = node
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.stop(t)
		}
	})
	for _, nd := range nodes {
		waitForBroker(t, nd.addr, nd.done)
	}
	for _, nd := range nodes {
		waitMetadata(t, nd.addr, fmt.Sprintf("%d brokers", n), func(md kadm.Metadata) bool { return len(md.Brokers) == n })
	}
	return nodes
}

// stop cancels the node's Run (a SIGTERM) and waits for it to return.
func (nd *clusterNode) stop(t *testing.T) {
	if nd.cancel == nil {
		return
	}
	nd.cancel()
	nd.cancel = nil
	select {
	case err := <-nd.done:
		if err != nil {
			t.Errorf("node %d: Run returned %v", nd.id, err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("node %d did not stop within 30s", nd.id)
	}
}

// waitMetadata polls addr's Metadata until ok holds.
func waitMetadata(t *testing.T, addr, what string, ok func(kadm.Metadata) bool) kadm.Metadata {
	t.Helper()
	adm := newAdmin(t, addr)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		md, err := adm.Metadata(ctx)
		cancel()
		if err == nil && ok(md) {
			return md
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: waiting for %s: last metadata %+v, err %v", addr, what, md.Brokers, err)
		}
		time.Sleep(50 * time.Millisecond) // polling a remote condition, not synchronising
	}
}

func TestClusterControlPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	nodes := startCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	md := waitMetadata(t, nodes[1].addr, "a controller", func(md kadm.Metadata) bool { return md.Controller > 0 })
	ctrlID := md.Controller

	// CreateTopics sent straight to a broker that is not the controller is
	// forwarded to it.
	var other *clusterNode
	for id, nd := range nodes {
		if id != ctrlID {
			other = nd
			break
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(other.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	creq := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "replicated", 6, 3
	creq.Topics = append(creq.Topics, ct)
	creq.TimeoutMillis = 30000
	cresp, err := creq.RequestWith(ctx, cl.Broker(int(other.id)))
	if err != nil {
		t.Fatal(err)
	}
	if code := cresp.Topics[0].ErrorCode; code != 0 {
		t.Fatalf("CreateTopics on non-controller node %d: code %d %v", other.id, code, cresp.Topics[0].ErrorMessage)
	}
	md = waitMetadata(t, other.addr, "the new topic", func(md kadm.Metadata) bool {
		return len(md.Topics["replicated"].Partitions) == 6
	})
	leaders := map[int32]int{}
	for _, p := range md.Topics["replicated"].Partitions {
		leaders[p.Leader]++
		if len(p.Replicas) != 3 {
			t.Fatalf("partition %d replicas %v", p.Partition, p.Replicas)
		}
	}
	if len(leaders) != 3 {
		t.Fatalf("leaders %v are not spread over the three brokers", leaders)
	}

	// Reassignments: dropping a replica completes at once and is listed
	// while in progress (never here); a preferred election over all
	// partitions has nothing to do.
	adm := kadm.NewClient(cl)
	p0 := md.Topics["replicated"].Partitions[0]
	var ra kadm.AlterPartitionAssignmentsReq
	ra.Assign("replicated", 0, p0.Replicas[:2])
	if res, err := adm.AlterPartitionAssignments(ctx, ra); err != nil || res["replicated"][0].Err != nil {
		t.Fatalf("AlterPartitionAssignments: %v %+v", err, res)
	}
	waitMetadata(t, other.addr, "partition 0 on two replicas", func(md kadm.Metadata) bool {
		return slices.Equal(md.Topics["replicated"].Partitions[0].Replicas, p0.Replicas[:2])
	})
	listed, err := adm.ListPartitionReassignments(ctx, nil)
	if err != nil || len(listed) != 0 {
		t.Fatalf("ListPartitionReassignments: %v %+v", err, listed)
	}
	elected, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
	if err != nil {
		t.Fatal(err)
	}
	for topic, ps := range elected {
		for p, r := range ps {
			t.Errorf("preferred election of %s-%d: %+v (nothing should need one)", topic, p, r)
		}
	}

	// Under load the quorum may elect another controller meanwhile, so the
	// CLI is compared with the controller that Metadata names at that moment.
	var status string
	now := waitMetadata(t, other.addr, "cluster status names the current controller", func(md kadm.Metadata) bool {
		status = mustCLI(t, 0, "", "cluster", "status", "--bootstrap", other.addr).stdout
		return strings.Contains(status, fmt.Sprintf("Controller:  %d", md.Controller))
	})
	wantContains(t, "cluster status", status, "3 live, 0 fenced", "Metadata quorum: leader ", "Follower")
	ctrlID = now.Controller

	// A SIGTERM-style stop of a broker that is not the controller: its
	// leaderships move before it stops, and it leaves the metadata.
	var victim *clusterNode
	for id, nd := range nodes {
		if id != ctrlID && id != other.id {
			victim = nd
		}
	}
	victim.stop(t)
	md = waitMetadata(t, other.addr, fmt.Sprintf("node %d gone", victim.id), func(md kadm.Metadata) bool {
		return len(md.Brokers) == 2
	})
	for _, p := range md.Topics["replicated"].Partitions {
		if p.Leader == victim.id || p.Leader < 0 || slices.Contains(p.ISR, victim.id) {
			t.Errorf("partition %d after node %d stopped: leader %d ISR %v", p.Partition, victim.id, p.Leader, p.ISR)
		}
	}
	res := mustCLI(t, 0, "", "cluster", "status", "--bootstrap", other.addr)
	wantContains(t, "cluster status", res.stdout, "2 live, 1 fenced", "Under-replicated partitions:")
}
