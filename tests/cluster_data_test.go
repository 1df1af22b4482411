package tests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterDataPlane runs three "gregor serve" nodes, creates an RF=3
// topic with min.insync.replicas=2 and writes unique values with an
// idempotent acks=all producer while the leader of some partitions is
// SIGKILLed and later restarted. Every acknowledged value must be read back
// exactly once at its acknowledged offset, and the ISR must re-form once the
// node is back. It then makes a follower diverge: both followers of a
// partition are paused, the leader takes acks=1 records they never fetch,
// the leader is killed and the followers resumed, so one of them becomes
// leader and takes new records; the old leader must rejoin with its
// unreplicated tail truncated, its log equal to the new leader's.
func TestClusterDataPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster of child processes")
	}
	const (
		topic      = "dataplane"
		partitions = 6
	)
	c := startChildCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admCl := c.client()
	adm := kadm.NewClient(admCl)
	two := "2"
	createReplicated(t, ctx, adm, topic, partitions, map[string]*string{"min.insync.replicas": &two})
	md := c.waitMetadata("the RF=3 topic with a full ISR", 30*time.Second, func(md kadm.Metadata) bool { return fullISR(md, topic, partitions) })

	// The victim leads some partitions and is not the controller, so the
	// test measures data-plane failover (the fault suite kills controllers).
	var victim int32 = -1
	for _, p := range md.Topics[topic].Partitions {
		if p.Leader != md.Controller {
			victim = p.Leader
			break
		}
	}
	if victim < 0 {
		t.Fatalf("every partition is led by the controller %d: %+v", md.Controller, md.Topics[topic].Partitions)
	}

	w := newAckWriter(c.client(ackWriterOpts()...), topic, "dp")
	wctx, stopWriting := context.WithCancel(ctx)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		w.run(wctx, ctx, 200)
	}()
	defer func() { stopWriting(); <-writerDone }()

	w.waitAcked(t, 2000, 60*time.Second)
	c.kill(victim)
	a, _, _ := w.counts()
	t.Logf("SIGKILLed node %d (leader of some partitions) after %d acknowledgements", victim, a)
	w.waitAcked(t, a+2000, 60*time.Second)
	md = c.waitMetadata(fmt.Sprintf("leaders away from node %d", victim), 30*time.Second, func(md kadm.Metadata) bool {
		for _, p := range md.Topics[topic].Partitions {
			if p.Leader == victim || p.Leader < 0 {
				return false
			}
		}
		return true
	})
	c.restart(victim)
	a, _, _ = w.counts()
	t.Logf("restarted node %d after %d acknowledgements", victim, a)
	c.waitMetadata("the ISR re-formed with the restarted node", 60*time.Second, func(md kadm.Metadata) bool { return fullISR(md, topic, partitions) })
	w.waitAcked(t, a+1000, 60*time.Second)
	stopWriting()
	<-writerDone

	ends := listEnds(t, ctx, adm, topic)
	got, err := drainTopic(ctx, c.addrs(), topic, ends)
	if err != nil {
		t.Fatal(err)
	}
	rep := checkRecords([]*ackWriter{w}, got, func(v string) bool { return strings.HasPrefix(v, "dp-") })
	t.Logf("failover: %s", rep)
	if !rep.ok() {
		t.Errorf("acknowledged writes across the loss of node %d: %s", victim, rep)
	}
	if rep.Acked < 5000 {
		t.Errorf("only %d acknowledged writes", rep.Acked)
	}

	testDivergedFollowerTruncated(t, ctx, c, adm)
}

// testDivergedFollowerTruncated builds a diverged replica and checks that
// it is truncated when it rejoins (see TestClusterDataPlane).
func testDivergedFollowerTruncated(t *testing.T, ctx context.Context, c *childCluster, adm *kadm.Client) {
	const topic = "diverge"
	createReplicated(t, ctx, adm, topic, 1, nil)
	md := c.waitMetadata("the diverge topic with a full ISR", 30*time.Second, func(md kadm.Metadata) bool { return fullISR(md, topic, 1) })
	p := md.Topics[topic].Partitions[0]
	oldLeader := p.Leader
	leaderAddr := c.nodes[oldLeader].addr

	// Replicated records first, on every replica.
	produce := func(addr string, acks kgo.Acks, prefix string, n int) {
		t.Helper()
		opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.RequiredAcks(acks), kgo.ProducerLinger(0), kgo.RecordDeliveryTimeout(30 * time.Second)}
		if acks != kgo.AllISRAcks() {
			opts = append(opts, kgo.DisableIdempotentWrite())
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for i := range n {
			v := fmt.Sprintf("%s-%04d", prefix, i)
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatalf("produce %s to %s: %v", v, addr, err)
			}
		}
	}
	produce(leaderAddr, kgo.AllISRAcks(), "replicated", 50)

	// The followers stop fetching (and the controller quorum, two of
	// three voters paused, can commit nothing, so the ISR stays whole);
	// the leader alone takes acks=1 records.
	var followers []int32
	for _, r := range p.Replicas {
		if r != oldLeader {
			followers = append(followers, r)
		}
	}
	for _, f := range followers {
		c.pause(f)
	}
	produce(leaderAddr, kgo.LeaderAck(), "unreplicated", 20)
	c.kill(oldLeader)
	for _, f := range followers {
		c.resume(f)
	}
	md = c.waitMetadata("a new leader of the diverge topic", 30*time.Second, func(md kadm.Metadata) bool {
		l := md.Topics[topic].Partitions[0].Leader
		return slices.Contains(followers, l)
	})
	newLeader := md.Topics[topic].Partitions[0].Leader
	t.Logf("node %d led with 20 unreplicated records and was killed; node %d leads now", oldLeader, newLeader)
	produce(c.nodes[newLeader].addr, kgo.AllISRAcks(), "after", 30)

	c.restart(oldLeader)
	c.waitMetadata("the old leader back in the ISR", 60*time.Second, func(md kadm.Metadata) bool { return fullISR(md, topic, 1) })
	want := readPartition(t, ctx, c, adm, topic)

	// Make the old leader lead again (it is the preferred replica when it
	// was placed first) and read its log through it.
	var ea kadm.TopicsSet = kadm.TopicsSet{}
	ea.Add(topic, 0)
	if p.Replicas[0] == oldLeader {
		if _, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, ea); err != nil {
			t.Fatalf("preferred election: %v", err)
		}
	} else {
		// Move leadership to it by making it first in the assignment.
		order := append([]int32{oldLeader}, followers...)
		var ra kadm.AlterPartitionAssignmentsReq
		ra.Assign(topic, 0, order)
		if _, err := adm.AlterPartitionAssignments(ctx, ra); err != nil {
			t.Fatalf("reassign: %v", err)
		}
		c.waitMetadata("the reordered assignment", 30*time.Second, func(md kadm.Metadata) bool {
			return md.Topics[topic].Partitions[0].Replicas[0] == oldLeader
		})
		if _, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, ea); err != nil {
			t.Fatalf("preferred election: %v", err)
		}
	}
	c.waitMetadata(fmt.Sprintf("node %d leading again", oldLeader), 30*time.Second, func(md kadm.Metadata) bool {
		return md.Topics[topic].Partitions[0].Leader == oldLeader
	})
	got := readPartition(t, ctx, c, adm, topic)
	if !slices.Equal(got, want) {
		t.Fatalf("node %d's log after rejoining differs from node %d's:\n got %v\nwant %v", oldLeader, newLeader, got, want)
	}
	// A fetch the leader answered just before the pause may still carry
	// the first unreplicated records to a follower; the rest never left
	// the old leader, so its log diverged and had to be truncated.
	var shape []string
	for i := range 50 {
		shape = append(shape, fmt.Sprintf("replicated-%04d", i))
	}
	kept := len(want) - 80
	for i := range max(kept, 0) {
		shape = append(shape, fmt.Sprintf("unreplicated-%04d", i))
	}
	for i := range 30 {
		shape = append(shape, fmt.Sprintf("after-%04d", i))
	}
	if kept < 0 || kept >= 20 || !slices.Equal(want, shape) {
		t.Fatalf("log of the diverge topic: %d records %v; want 50 replicated, fewer than 20 unreplicated, 30 after", len(want), want)
	}
	t.Logf("node %d truncated %d unreplicated records and matches node %d (%d records)", oldLeader, 20-kept, newLeader, len(want))
}

// readPartition reads partition 0 of topic up to its end, as "offset:value".
func readPartition(t *testing.T, ctx context.Context, c *childCluster, adm *kadm.Client, topic string) []string {
	t.Helper()
	got, err := drainTopic(ctx, c.addrs(), topic, listEnds(t, ctx, adm, topic))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range got {
		out = append(out, string(r.Value))
		if int64(len(out)-1) != r.Offset {
			t.Fatalf("%s: record %q at offset %d, want offset %d", topic, r.Value, r.Offset, len(out)-1)
		}
	}
	return out
}

// listEnds lists the high watermark of every partition of topic.
func listEnds(t testing.TB, ctx context.Context, adm *kadm.Client, topic string) map[int32]int64 {
	t.Helper()
	listed, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		t.Fatalf("list end offsets of %s: %v", topic, err)
	}
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}
