package tests

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// eosCopier is a consume-transform-produce loop: a GroupTransactSession
// that copies an input topic to an output topic, committing the consumed
// offsets in each transaction.
type eosCopier struct {
	t      *testing.T
	sess   *kgo.GroupTransactSession
	output string
}

func newEOSCopier(t *testing.T, seeds []string, txnID, group, input, output string, consumerProtocol bool) *eosCopier {
	t.Helper()
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(10 * time.Second),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(input),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.SessionTimeout(6 * time.Second),
		kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
	}
	if consumerProtocol {
		opts = append(opts, kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()))
	}
	sess, err := kgo.NewGroupTransactSession(opts...)
	if err != nil {
		t.Fatal(err)
	}
	c := &eosCopier{t: t, sess: sess, output: output}
	t.Cleanup(sess.Close)
	return c
}

// copyTxn polls, and copies what it polled in one transaction that it
// tries to commit; it returns how many records it polled (0 for none). The
// copier is the only member of its group and the only producer of its
// transactional id, so nothing may refuse or abort its commit: a failed
// End or one that aborts fails the test. (franz-go aborts a transaction
// whose TxnOffsetCommit keeps answering COORDINATOR_NOT_AVAILABLE rather
// than failing, so an uncommitted End is the symptom to look for.)
func (c *eosCopier) copyTxn(pollRecords int) int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	fetches := c.sess.PollRecords(ctx, pollRecords)
	cancel()
	if fetches.NumRecords() == 0 {
		return 0
	}
	if err := c.sess.Begin(); err != nil {
		c.t.Fatalf("begin: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fetches.EachRecord(func(r *kgo.Record) {
		c.sess.Produce(ctx, &kgo.Record{Topic: c.output, Key: r.Key, Value: r.Value}, nil)
	})
	committed, err := c.sess.End(ctx, kgo.TryCommit)
	if err != nil || !committed {
		c.t.Fatalf("end of a transaction of %d records: committed %v, err %v", fetches.NumRecords(), committed, err)
	}
	return fetches.NumRecords()
}

// copyUntil runs transactions until *copied reaches want.
func (c *eosCopier) copyUntil(copied *int, want int) {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for *copied < want {
		if time.Now().After(deadline) {
			c.t.Fatalf("copied %d of %d records within 60s", *copied, want)
		}
		*copied += c.copyTxn(10)
	}
}

// eosFixture is an input topic of n records, an empty output topic and a
// group, on one broker or a cluster.
type eosFixture struct {
	seeds         []string
	input, output string
	group         string
	n             int
}

func newEOSFixture(t *testing.T, seeds []string, name string, n int) *eosFixture {
	t.Helper()
	f := &eosFixture{seeds: seeds, input: name + "-in", output: name + "-out", group: name + "-group", n: n}
	adm := newAdmin(t, seeds[0])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, topic := range []string{f.input, f.output} {
		if _, err := adm.CreateTopic(ctx, 3, int16(min(len(seeds), 3)), nil, topic); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		v := strconv.Itoa(i)
		recs[i] = &kgo.Record{Topic: f.input, Key: []byte(v), Value: []byte(v)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return f
}

// check reads the output with read_committed and the group's committed
// offsets: every input record is copied exactly once and the group has
// committed the end of every input partition.
func (f *eosFixture) check(t *testing.T) {
	t.Helper()
	got := readCommittedFrom(t, f.seeds, f.output, f.n)
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	missing, dups := 0, 0
	for i := 0; i < f.n; i++ {
		switch seen[strconv.Itoa(i)] {
		case 0:
			missing++
		case 1:
		default:
			dups++
		}
	}
	if missing > 0 || dups > 0 || len(got) != f.n {
		t.Fatalf("output: %d records for %d inputs, %d missing, %d duplicated", len(got), f.n, missing, dups)
	}
	adm := newAdmin(t, f.seeds[0])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, f.input)
	if err != nil {
		t.Fatal(err)
	}
	offs, err := adm.FetchOffsets(ctx, f.group)
	if err != nil {
		t.Fatal(err)
	}
	ends.Each(func(e kadm.ListedOffset) {
		o, ok := offs.Lookup(f.input, e.Partition)
		if !ok || o.At != e.Offset {
			t.Errorf("group %s committed %d for %s/%d (found %v), want the end %d", f.group, o.At, f.input, e.Partition, ok, e.Offset)
		}
	})
}

// readCommittedFrom reads a topic from the start with read_committed until
// want records came, then for a quiet moment in which nothing more may.
func readCommittedFrom(t *testing.T, seeds []string, topic string, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(got) < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	extra, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	cl.PollFetches(extra).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	return got
}

// testEOSRestart: an application copying with transactions stops cleanly
// (no open transaction) and starts again with the same transactional.id and
// group. InitProducerId bumps the producer epoch; the restarted producer's
// first TxnOffsetCommit (and every one after) must be accepted.
func testEOSRestart(t *testing.T, seeds []string, name string, consumerProtocol bool) {
	f := newEOSFixture(t, seeds, name, 90)
	copied := 0
	first := newEOSCopier(t, seeds, name+"-txn", f.group, f.input, f.output, consumerProtocol)
	first.copyUntil(&copied, 30)
	first.sess.Close()
	second := newEOSCopier(t, seeds, name+"-txn", f.group, f.input, f.output, consumerProtocol)
	second.copyUntil(&copied, f.n)
	second.sess.Close()
	f.check(t)
}

// testEOSFenceZombie: the first producer is in the middle of a
// transaction when its consumer drops out of the group (as one that stalled
// past its session timeout), and a successor with the same
// transactional.id takes over. The successor's InitProducerId aborts the
// zombie's transaction and fences it; the successor consumes from the
// committed offsets and commits offsets in its transactions, and the
// zombie's commit fails.
func testEOSFenceZombie(t *testing.T, seeds []string, name string, consumerProtocol bool) {
	f := newEOSFixture(t, seeds, name, 90)
	copied := 0
	zombie := newEOSCopier(t, seeds, name+"-txn", f.group, f.input, f.output, consumerProtocol)
	zombie.copyUntil(&copied, 30)
	var fetches kgo.Fetches
	deadline := time.Now().Add(30 * time.Second)
	for fetches.NumRecords() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the zombie polled nothing")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fetches = zombie.sess.PollRecords(ctx, 10)
		cancel()
	}
	if err := zombie.sess.Begin(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var zombieVals []string
	fetches.EachRecord(func(r *kgo.Record) {
		zombieVals = append(zombieVals, string(r.Value))
		if err := zombie.sess.ProduceSync(ctx, &kgo.Record{Topic: f.output, Key: r.Key, Value: r.Value}).FirstErr(); err != nil {
			t.Fatalf("zombie produce: %v", err)
		}
	})
	zombie.sess.Client().LeaveGroup()

	successor := newEOSCopier(t, seeds, name+"-txn", f.group, f.input, f.output, consumerProtocol)
	successor.copyUntil(&copied, f.n)
	if committed, err := zombie.sess.End(ctx, kgo.TryCommit); err == nil && committed {
		t.Fatalf("the fenced zombie committed its transaction of %v", zombieVals)
	}
	zombie.sess.Close()
	successor.sess.Close()
	f.check(t)
}

var eosProtocols = []struct {
	name     string
	consumer bool
}{{"classic", false}, {"consumer", true}}

// TestTxnEOSRestartOneNode: a restarted application and a successor that
// fences a zombie go on committing offsets in transactions, for classic and
// consumer-protocol groups, on one broker.
func TestTxnEOSRestartOneNode(t *testing.T) {
	for _, p := range eosProtocols {
		t.Run(p.name, func(t *testing.T) {
			t.Run("restart", func(t *testing.T) {
				b := startBroker(t, txnConfig)
				testEOSRestart(t, []string{b.Addr}, "eos-restart-"+p.name, p.consumer)
			})
			t.Run("fence-zombie", func(t *testing.T) {
				b := startBroker(t, txnConfig)
				testEOSFenceZombie(t, []string{b.Addr}, "eos-zombie-"+p.name, p.consumer)
			})
		})
	}
}

// TestTxnEOSRestartCluster is TestTxnEOSRestartOneNode on an in-process
// 3-node cluster with every topic, __consumer_offsets and
// __transaction_state replicated three times.
func TestTxnEOSRestartCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("3-node cluster")
	}
	nodes := startClusterTuned(t, 3, func(c *config.Config) {
		txnConfig(c)
		c.Groups.OffsetsTopicPartitions = 3
		c.Transactions.StateLogPartitions = 3
	})
	var seeds []string
	for _, nd := range nodes {
		seeds = append(seeds, nd.addr)
	}
	for _, p := range eosProtocols {
		t.Run(p.name, func(t *testing.T) {
			t.Run("restart", func(t *testing.T) {
				testEOSRestart(t, seeds, "eos-restart-"+p.name, p.consumer)
			})
			t.Run("fence-zombie", func(t *testing.T) {
				testEOSFenceZombie(t, seeds, "eos-zombie-"+p.name, p.consumer)
			})
		})
	}
}
