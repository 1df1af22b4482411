package controller

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gregorbroker/gregor/core/config"
)

// testNode is one controller+broker node of an in-process cluster on
// loopback.
type testNode struct {
	id      int32
	dir     string
	addr    string
	c       *Controller
	session *BrokerSession
	stop    context.CancelFunc
	done    chan struct{}
}

type testCluster struct {
	t      *testing.T
	voters []config.Voter
	nodes  map[int32]*testNode
}

const (
	clusterSession   = time.Second
	clusterHeartbeat = 100 * time.Millisecond
)

func fastRaft(rc *raft.Config) {
	rc.HeartbeatTimeout = 150 * time.Millisecond
	rc.ElectionTimeout = 150 * time.Millisecond
	rc.LeaderLeaseTimeout = 100 * time.Millisecond
}

// newTestCluster starts voters 1..voters and broker-only nodes after them.
func newTestCluster(t *testing.T, voters, brokersOnly int) *testCluster {
	t.Helper()
	tc := &testCluster{t: t, nodes: map[int32]*testNode{}}
	lns := map[int32]net.Listener{}
	for id := int32(1); id <= int32(voters+brokersOnly); id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[id] = ln
		n := &testNode{id: id, dir: t.TempDir(), addr: ln.Addr().String()}
		tc.nodes[id] = n
		if id <= int32(voters) {
			tc.voters = append(tc.voters, config.Voter{ID: id, Address: n.addr})
		}
	}
	t.Cleanup(func() {
		for _, n := range tc.nodes {
			tc.stop(n.id)
		}
	})
	errs := make(chan error, len(lns))
	for id, ln := range lns {
		go func() { errs <- tc.start(id, ln) }()
	}
	for range lns {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return tc
}

// start opens node id's controller and runs its broker session.
func (tc *testCluster) start(id int32, ln net.Listener) error {
	n := tc.nodes[id]
	cfg := Config{
		NodeID: id, Dir: n.dir, ClusterID: "gregor-test-cluster", Broker: config.Default(),
		Logger: quietLogger, Tune: fastRaft, Voters: tc.voters, Listener: ln, SessionTimeout: clusterSession,
	}
	c, err := Open(cfg)
	if err != nil {
		return fmt.Errorf("node %d: %w", id, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := c.StartBroker(ctx, Broker{NodeID: id, Host: "127.0.0.1", Port: 19000 + id, ControllerAddress: n.addr}, clusterHeartbeat)
	if err != nil {
		c.Close()
		return fmt.Errorf("node %d: %w", id, err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	n.c, n.session, n.stop, n.done = c, s, stop, make(chan struct{})
	go func() {
		defer close(n.done)
		s.Run(runCtx)
	}()
	return nil
}

// stop kills node id: no controlled shutdown, as if the process died.
func (tc *testCluster) stop(id int32) {
	n := tc.nodes[id]
	if n.c == nil {
		return
	}
	n.stop()
	<-n.done
	n.c.Close()
	n.c = nil
}

// restart starts a stopped node again on its old address and data.
func (tc *testCluster) restart(id int32) {
	tc.t.Helper()
	ln, err := net.Listen("tcp", tc.nodes[id].addr)
	if err != nil {
		tc.t.Fatal(err)
	}
	if err := tc.start(id, ln); err != nil {
		tc.t.Fatal(err)
	}
}

// active returns the node that is the active controller, waiting for one.
func (tc *testCluster) active() *testNode {
	tc.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range tc.nodes {
			if n.c != nil && n.c.isActive() {
				return n
			}
		}
		tc.waitAnyChange(100 * time.Millisecond)
	}
	tc.t.Fatal("no active controller")
	return nil
}

// waitAnyChange waits until some running node's image or leadership
// changes, or d passes.
func (tc *testCluster) waitAnyChange(d time.Duration) {
	var chans []chan struct{}
	for _, n := range tc.nodes {
		if n.c != nil {
			n.c.mu.Lock()
			chans = append(chans, n.c.changed)
			n.c.mu.Unlock()
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	done := make(chan struct{})
	defer close(done)
	fired := make(chan struct{}, len(chans))
	for _, ch := range chans {
		go func() {
			select {
			case <-ch:
				fired <- struct{}{}
			case <-done:
			}
		}()
	}
	select {
	case <-fired:
	case <-timer.C:
	}
}

// waitFor waits until cond holds for node id's image.
func (tc *testCluster) waitFor(id int32, what string, cond func(*Image) bool) *Image {
	tc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c := tc.nodes[id].c
	if err := c.waitImage(ctx, cond); err != nil {
		tc.t.Fatalf("node %d: waiting for %s: %v", id, what, err)
	}
	return c.Image()
}

func TestClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-node cluster")
	}
	tc := newTestCluster(t, 3, 1)
	ctx := context.Background()
	act := tc.active()

	// Every node sees four live brokers; node 4 follows the log as a non-voter.
	for id := range tc.nodes {
		tc.waitFor(id, "four live brokers", func(im *Image) bool { return len(im.LiveBrokerIDs()) == 4 })
	}
	if im := tc.nodes[4].c.Image(); im.Brokers[4].ControllerAddress != tc.nodes[4].addr {
		t.Fatalf("node 4 registered controller address %q", im.Brokers[4].ControllerAddress)
	}

	// A topic created on a node that is not the active controller is
	// forwarded, and visible there on return.
	var other *testNode
	for _, id := range []int32{1, 2, 3, 4} {
		if id != act.id {
			other = tc.nodes[id]
			break
		}
	}
	res := other.c.CreateTopics(ctx, []CreateTopic{{Name: "events", NumPartitions: 8, ReplicationFactor: 3}}, false)
	if res[0].Err != nil {
		t.Fatalf("CreateTopics on node %d: %v", other.id, res[0].Err)
	}
	topic, ok := other.c.Image().Topic("events")
	if !ok || topic.ID != res[0].ID {
		t.Fatalf("node %d does not see the topic it created", other.id)
	}
	leaders := map[int32]int{}
	for _, p := range topic.Partitions {
		leaders[p.Leader]++
		if len(p.Replicas) != 3 || len(p.ISR) != 3 {
			t.Fatalf("partition %d: %+v", p.Index, p)
		}
	}
	if len(leaders) != 4 {
		t.Fatalf("leaders %v: not spread over the four brokers", leaders)
	}
	res = other.c.CreateTopics(ctx, []CreateTopic{{Name: "events", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if !errors.Is(res[0].Err, ErrTopicExists) {
		t.Fatalf("forwarded duplicate create: %v", res[0].Err)
	}
	// Forwarded producer ids and ISR changes.
	first, err := other.c.AllocateProducerIDs(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if next, err := tc.nodes[4].c.AllocateProducerIDs(ctx, 10); err != nil || next != first+1000 {
		t.Fatalf("second block at %d (%v), want %d", next, err, first+1000)
	}
	var shrink Partition
	for _, p := range topic.Partitions {
		if p.Leader == 4 {
			shrink = p
			break
		}
	}
	isr := slices.DeleteFunc(slices.Clone(shrink.ISR), func(id int32) bool { return id != 4 && id == shrink.Replicas[len(shrink.Replicas)-1] })
	got, err := tc.nodes[4].c.AlterPartition(ctx, "events", shrink.Index, shrink.LeaderEpoch, shrink.PartitionEpoch, isr)
	if err != nil || !slices.Equal(got.ISR, isr) || got.PartitionEpoch != shrink.PartitionEpoch+1 {
		t.Fatalf("AlterPartition from broker-only node 4: %+v, %v (want ISR %v)", got, err, isr)
	}
	if _, err := tc.nodes[4].c.AlterPartition(ctx, "events", shrink.Index, shrink.LeaderEpoch, shrink.PartitionEpoch, isr); !errors.Is(err, ErrInvalidUpdateVersion) {
		t.Fatalf("stale AlterPartition: %v", err)
	}

	// Kill a node that is not the active controller but leads partitions:
	// after the session timeout it is fenced and its partitions get
	// leaders from their ISRs.
	victim := int32(-1)
	for id, n := range leaders {
		if id != act.id && n > 0 && id != 4 {
			victim = id
			break
		}
	}
	before, _ := act.c.Image().Topic("events")
	tc.stop(victim)
	im := tc.waitFor(act.id, fmt.Sprintf("broker %d fenced and replaced", victim), func(im *Image) bool {
		if !im.Brokers[victim].Fenced {
			return false
		}
		for _, p := range im.Topics["events"].Partitions {
			if p.Leader == victim || p.Leader < 0 || slices.Contains(p.ISR, victim) {
				return false
			}
		}
		return true
	})
	for i, p := range im.Topics["events"].Partitions {
		old := before.Partitions[i]
		if old.Leader == victim && (!slices.Contains(old.ISR, p.Leader) || p.LeaderEpoch != old.LeaderEpoch+1) {
			t.Errorf("partition %d: new leader %d (epoch %d) not from the old ISR %v or epoch not bumped from %d",
				i, p.Leader, p.LeaderEpoch, old.ISR, old.LeaderEpoch)
		}
	}

	// It returns: registered again and unfenced.
	oldEpoch := im.Brokers[victim].Epoch
	tc.restart(victim)
	tc.waitFor(act.id, fmt.Sprintf("broker %d unfenced", victim), func(im *Image) bool {
		b := im.Brokers[victim]
		return !b.Fenced && b.Epoch > oldEpoch
	})

	// Controller failover: kill the active controller; another voter takes
	// over with the metadata intact, fences the old one and keeps writing.
	tc.stop(act.id)
	next := tc.active()
	if next.id == act.id {
		t.Fatal("the stopped node is still active")
	}
	im = tc.waitFor(next.id, "the new controller's record", func(im *Image) bool { return im.ControllerID == next.id })
	if t2, ok := im.Topic("events"); !ok || t2.ID != topic.ID || len(t2.Partitions) != 8 {
		t.Fatal("the topic did not survive the failover")
	}
	tc.waitFor(next.id, fmt.Sprintf("old controller %d fenced", act.id), func(im *Image) bool {
		return im.Brokers[act.id].Fenced && im.leaderships(act.id) == 0
	})
	res = tc.nodes[4].c.CreateTopics(ctx, []CreateTopic{{Name: "after-failover", NumPartitions: 2, ReplicationFactor: 2}}, false)
	if res[0].Err != nil {
		t.Fatalf("CreateTopics after the failover: %v", res[0].Err)
	}
	for _, p := range tc.nodes[4].c.Image().Topics["after-failover"].Partitions {
		if slices.Contains(p.Replicas, act.id) {
			t.Errorf("partition %d placed on fenced broker %d", p.Index, act.id)
		}
	}

	// Controlled shutdown of a live broker moves its leaderships first.
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tc.nodes[4].session.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	if im := next.c.Image(); im.leaderships(4) != 0 || !im.Brokers[4].Fenced {
		t.Fatalf("after node 4's controlled shutdown: leads %d, fenced %v", im.leaderships(4), im.Brokers[4].Fenced)
	}
}

func TestVoterAddressesMustBeDialable(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	_, err = Open(Config{NodeID: 1, Dir: t.TempDir(), Broker: config.Default(), Logger: quietLogger,
		Voters: []config.Voter{{ID: 1, Address: fmt.Sprintf("127.0.0.1:%d", p)}}, Listener: ln})
	if err == nil {
		t.Fatal("a wildcard controller listener without an advertised address was accepted")
	}
}
