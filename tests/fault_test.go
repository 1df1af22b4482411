package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFault is the fault suite (make fault, make fault-smoke; never in
// make test): three "gregor serve" processes and three workloads while
// faults from a seeded schedule run.
//
// The plain workload: two idempotent acks=all writers of unique values, a
// reader by assign and a reader by group. After healing, a fresh reader
// drains every partition and the checker reports lost acknowledged writes,
// duplicates, acknowledged values at another offset, one offset holding
// different values (across all readers) and offsets going backwards in one
// reader's stream.
//
// The consumer-group workload (fault_groups_test.go): members commit
// offsets synchronously after each poll; after every fault the checker
// fetches the committed offsets and reports any below an acknowledged
// commit or an earlier fetch, and at the end any record below a committed
// offset that no member received.
//
// The exactly-once workload (fault_eos_test.go, fault_eos_check_test.go):
// GroupTransactSession members copy an input topic to an output topic; the
// checker reads the output raw and read_committed and reports input
// records missing, duplicated or out of order per key, aborted records
// visible, records of acknowledged transactions lost, transactions left
// open and committed records read_committed did not return.
//
// The faults: SIGKILL a partition leader or the active controller and
// restart it, SIGSTOP and SIGCONT a node, SIGTERM a node and restart it,
// cut the link between two nodes or isolate one node from both peers
// (dropping or blackholing connections; see faultNet), reassign a
// partition between three and two replicas, SIGKILL a follower, truncate
// or bit-flip the tail of its segment and restart it, and SIGKILL the
// leader of the group's __consumer_offsets partition or of a transactional
// id's __transaction_state partition right after a commit was acknowledged
// (fault_target_test.go), and fail a leader's disk (fsync EIO, or ENOSPC
// with a short write) through core/log's file-system seam until its log dir
// is offline and its leaderships moved, then restart it (fault_diskfs_test.go).
// Every kind is drawn once per round, in an order
// the seed decides.
//
// GREGOR_FAULT=1 enables it. FAULT_SEEDS is a comma-separated list of seeds
// or ranges ("1-20"), default one seed from the clock; FAULT_DURATION is
// the fault phase of each seed (a Go duration, default 60s); FAULT_KINDS
// limits the schedule to some kinds ("kill-offsets-leader,kill-txn-leader").
// Every seed is printed, so "FAULT_SEEDS=<seed>" replays a schedule's
// choices (timing on a loaded machine still differs).
func TestFault(t *testing.T) {
	if os.Getenv("GREGOR_FAULT") == "" {
		t.Skip("the fault suite runs with make fault (GREGOR_FAULT=1)")
	}
	seeds, err := parseFaultSeeds(os.Getenv("FAULT_SEEDS"), uint64(time.Now().UnixNano()%1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	dur := 60 * time.Second
	if s := os.Getenv("FAULT_DURATION"); s != "" {
		if dur, err = time.ParseDuration(s); err != nil || dur <= 0 {
			t.Fatalf("FAULT_DURATION=%q: want a positive Go duration such as 60s (%v)", s, err)
		}
	}
	kinds, err := parseFaultKinds(os.Getenv("FAULT_KINDS"))
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, seed := range seeds {
		fmt.Printf("fault: seed %d, %v of faults\n", seed, dur)
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runFaultSchedule(t, seed, dur, kinds) })
		verdict := "PASS"
		if !ok {
			verdict = "FAIL"
		}
		results = append(results, fmt.Sprintf("seed %d: %s", seed, verdict))
	}
	fmt.Printf("fault: %d schedules of %v\n  %s\n", len(seeds), dur, strings.Join(results, "\n  "))
}

// parseFaultSeeds reads "1,5,10-12"; an empty string gives def.
func parseFaultSeeds(s string, def uint64) ([]uint64, error) {
	if strings.TrimSpace(s) == "" {
		return []uint64{def}, nil
	}
	var out []uint64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("FAULT_SEEDS=%q: %q is not a seed or a range a-b", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a || b-a > 10000 {
				return nil, fmt.Errorf("FAULT_SEEDS=%q: bad range %q", s, part)
			}
		}
		for v := a; v <= b; v++ {
			out = append(out, v)
		}
	}
	return out, nil
}

// parseFaultKinds reads FAULT_KINDS, a comma-separated subset of
// faultKinds (to replay one kind of fault); empty means all of them.
func parseFaultKinds(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return faultKinds, nil
	}
	var out []string
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(faultKinds, k) {
			return nil, fmt.Errorf("FAULT_KINDS=%q: %q is not one of %v", s, k, faultKinds)
		}
		out = append(out, k)
	}
	return out, nil
}

func TestParseFaultSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint64
		bad  bool
	}{
		{"", []uint64{7}, false},
		{"3", []uint64{3}, false},
		{"1, 4-6,9", []uint64{1, 4, 5, 6, 9}, false},
		{"x", nil, true},
		{"5-2", nil, true},
		{"1-", nil, true},
	} {
		got, err := parseFaultSeeds(tc.in, 7)
		if (err != nil) != tc.bad || !slices.Equal(got, tc.want) {
			t.Errorf("parseFaultSeeds(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

// liveReader consumes a topic for the whole run and keeps what it saw.
type liveReader struct {
	name string
	mu   sync.Mutex // guards got, errs
	got  []*kgo.Record
	errs []string
}

func (r *liveReader) run(ctx context.Context, cl *kgo.Client) {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		fs.EachError(func(topic string, p int32, err error) {
			if len(r.errs) < 20 {
				r.errs = append(r.errs, fmt.Sprintf("%s-%d: %v", topic, p, err))
			}
		})
		fs.EachRecord(func(rec *kgo.Record) { r.got = append(r.got, rec) })
		r.mu.Unlock()
	}
}

// faultKinds are the faults a schedule draws from. kill-offsets-leader
// and kill-txn-leader are targeted: they SIGKILL the leader of the
// __consumer_offsets partition of the consumer-group workload's group, or
// of the __transaction_state partition of one exactly-once member's
// transactional id, right after that client was told a commit succeeded.
//
// disk-fsync-eio and disk-enospc fail the disk of a partition's leader
// through core/log's file-system seam (the nodes run the errorfs build):
// every fsync fails with EIO, or every segment write with ENOSPC after a
// short write; the broker takes its log dir offline and the controller
// moves its leaderships, then the node is restarted on a working disk
// (fault_diskfs_test.go).
var faultKinds = []string{"kill-leader", "kill-controller", "pause", "restart", "cut-link", "isolate", "reassign", "corrupt-follower", "kill-offsets-leader", "kill-txn-leader", "disk-fsync-eio", "disk-enospc"}

// The workloads' topics and groups.
const (
	commitGroup   = "fault-commit" // the consumer-group workload, on the plain topic
	eosIn         = "fault-eos-in"
	eosOut        = "fault-eos-out"
	eosGroup      = "fault-eos"
	eosMembers    = 3
	commitMembers = 3
)

func runFaultSchedule(t *testing.T, seed uint64, dur time.Duration, kinds []string) {
	const (
		topic      = "fault"
		partitions = 6
	)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := startChildClusterNet(t, 3, true, true)
	ctx, cancel := context.WithTimeout(context.Background(), dur+5*time.Minute)
	defer cancel()
	adm := kadm.NewClient(c.client())
	two := "2"
	createReplicated(t, ctx, adm, topic, partitions, map[string]*string{"min.insync.replicas": &two})
	c.waitMetadata("the topic with a full ISR", 30*time.Second, func(md kadm.Metadata) bool { return fullISR(md, topic, partitions) })
	if c.net.nodeConns() == 0 {
		t.Fatal("the fault network told no connection apart as a node's (is /proc readable?): link cuts would do nothing")
	}

	wctx, stopWriting := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var writers []*ackWriter
	for i := range 2 {
		w := newAckWriter(c.client(ackWriterOpts()...), topic, fmt.Sprintf("w%d", i))
		writers = append(writers, w)
		wg.Add(1)
		go func() { defer wg.Done(); w.run(wctx, ctx, 100) }()
	}
	rctx, stopReading := context.WithCancel(ctx)
	assign := &liveReader{name: "assign"}
	group := &liveReader{name: "group"}
	parts := map[int32]kgo.Offset{}
	for p := range int32(partitions) {
		parts[p] = kgo.NewOffset().AtStart()
	}
	var rwg sync.WaitGroup
	rwg.Add(2)
	go func() {
		defer rwg.Done()
		assign.run(rctx, c.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts})))
	}()
	go func() {
		defer rwg.Done()
		group.run(rctx, c.client(kgo.ConsumerGroup("fault-readers"), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())))
	}()

	wl := startWorkloads(t, ctx, c, adm, topic)

	// The schedule: one fault at a time, each after the cluster has healed
	// from the previous one (every node up, every ISR whole), so that no
	// fault takes a partition below min.insync.replicas by itself.
	ids := []int32{1, 2, 3}
	start := time.Now()
	end := start.Add(dur)
	var faults, diskAnomalies []string
	perKind := map[string]int{}
	var bag []string // every kind once per round, in a seeded order
	for n := 0; time.Now().Before(end); n++ {
		time.Sleep(time.Duration(1000+rng.IntN(2000)) * time.Millisecond) // the schedule's pacing
		if len(bag) == 0 {
			bag = slices.Clone(kinds)
			rng.Shuffle(len(bag), func(i, j int) { bag[i], bag[j] = bag[j], bag[i] })
		}
		kind := bag[0]
		bag = bag[1:]
		perKind[kind]++
		down := time.Duration(500+rng.IntN(3500)) * time.Millisecond
		pick := rng.IntN(1 << 30)
		frng := rand.New(rand.NewPCG(seed, uint64(n))) // this fault's further choices
		mdctx, mdcancel := context.WithTimeout(ctx, 5*time.Second)
		md, err := c.metadata(mdctx)
		mdcancel()
		if err != nil {
			t.Fatalf("fault %d: metadata: %v", n, err)
		}
		ps := md.Topics[topic].Partitions.Sorted()
		part := ps[pick%len(ps)]
		var target int32
		switch kind {
		case "kill-leader", "disk-fsync-eio", "disk-enospc":
			target = part.Leader
		case "kill-controller":
			target = md.Controller
		case "corrupt-follower":
			var followers []int32
			for _, r := range part.Replicas {
				if r != part.Leader {
					followers = append(followers, r)
				}
			}
			slices.Sort(followers)
			target = part.Leader // an RF=1 partition has no follower; never drawn with RF>=2
			if len(followers) > 0 {
				target = followers[frng.IntN(len(followers))]
			}
		default:
			target = ids[pick%len(ids)]
		}
		if target < 1 || target > 3 {
			t.Fatalf("fault %d (%s): no target in metadata (controller %d)", n, kind, md.Controller)
		}
		a := 0
		for _, w := range writers {
			x, _, _ := w.counts()
			a += x
		}
		desc := fmt.Sprintf("%s node %d for %v (acked %d)", kind, target, down, a)
		var peer int32
		mode := cutDrop
		switch kind {
		case "cut-link":
			others := slices.DeleteFunc(slices.Clone(ids), func(id int32) bool { return id == target })
			peer = others[frng.IntN(len(others))]
			mode = []cutMode{cutDrop, cutBlackhole}[frng.IntN(2)]
			desc = fmt.Sprintf("cut-link %d<->%d (%s) for %v (acked %d)", target, peer, mode, down, a)
		case "isolate":
			mode = []cutMode{cutDrop, cutBlackhole}[frng.IntN(2)]
			desc = fmt.Sprintf("isolate node %d from its peers (%s) for %v (acked %d)", target, mode, down, a)
		case "reassign", "corrupt-follower":
			desc = fmt.Sprintf("%s %s-%d (replicas %v, leader %d) node %d (acked %d)", kind, topic, part.Partition, part.Replicas, part.Leader, target, a)
		case "kill-offsets-leader", "kill-txn-leader":
			desc = fmt.Sprintf("%s for %v (acked %d, %s)", kind, down, a, wl.acked())
		}
		t.Logf("fault %d at +%v: %s", n, time.Since(start).Round(100*time.Millisecond), desc)
		faults = append(faults, desc)
		switch kind {
		case "cut-link":
			c.net.cutLink(target, peer, mode)
			time.Sleep(down) // the link stays cut this long
			c.net.heal()
		case "isolate":
			for _, id := range ids {
				if id != target {
					c.net.cutLink(target, id, mode)
				}
			}
			time.Sleep(down)
			c.net.heal()
		case "reassign":
			reassignOne(t, ctx, adm, topic, partitions, part, ids, frng)
		case "corrupt-follower":
			c.kill(target)
			what, err := corruptTail(c.nodes[target].dataDir, topic, part.Partition, frng)
			if err != nil {
				t.Fatalf("fault %d: corrupt node %d: %v", n, target, err)
			}
			t.Logf("fault %d: node %d: %s", n, target, what)
			faults[len(faults)-1] += ": " + what
			c.restart(target)
		case "kill-offsets-leader", "kill-txn-leader":
			topicOf, id, acks := offsetsTopic, commitGroup, wl.groups.commits
			if kind == "kill-txn-leader" {
				m := frng.IntN(eosMembers)
				topicOf, id, acks = txnTopic, wl.eos.txnID(m), wl.eos.commits[m]
			}
			what, err := targetedKill(ctx, c, adm, md, topicOf, id, acks, down)
			if err != nil {
				t.Fatalf("fault %d (%s): %v", n, kind, err)
			}
			t.Logf("fault %d: killed %s", n, what)
			faults[len(faults)-1] += ": " + what
		case "disk-fsync-eio", "disk-enospc":
			what, anomaly, err := diskFault(ctx, c, md, kind, target, down, frng)
			if err != nil {
				t.Fatalf("fault %d (%s): %v", n, kind, err)
			}
			t.Logf("fault %d: %s", n, what)
			faults[len(faults)-1] += ": " + what
			if anomaly != "" {
				t.Logf("fault %d: ANOMALY %s", n, anomaly)
				diskAnomalies = append(diskAnomalies, fmt.Sprintf("fault %d: %s", n, anomaly))
			}
		case "kill-leader", "kill-controller":
			c.kill(target)
			time.Sleep(down) // the node stays down this long
			c.restart(target)
		case "pause":
			c.pause(target)
			time.Sleep(down) // the node stays frozen this long
			c.resume(target)
		case "restart":
			c.stop(target)
			time.Sleep(down)
			c.restart(target)
		}
		c.waitMetadata(fmt.Sprintf("healing after fault %d (%s)", n, desc), 90*time.Second, func(md kadm.Metadata) bool {
			return len(md.Brokers) == 3 && fullISR(md, topic, partitions) && wl.healed(md)
		})
		waitNoReassignment(t, ctx, adm, topic, partitions, 90*time.Second)
		wl.groups.check(ctx, adm, fmt.Sprintf("after fault %d (%s)", n, kind))
	}
	faultPhase := time.Since(start)

	// Healed: stop writing, flush what is in flight, let the live readers
	// catch up to the end, then drain with a fresh reader.
	stopWriting()
	wl.stopInput()
	wg.Wait()
	ends := listEnds(t, ctx, adm, topic)
	waitReaderCaughtUp(t, assign, ends, 60*time.Second)
	groupNote := wl.finishGroups(t, ctx, adm, ends)
	eosRep := wl.finishEOS(t, ctx, adm, c.addrs())
	stopReading()
	rwg.Wait()
	got, err := drainTopic(ctx, c.addrs(), topic, ends)
	if err != nil {
		t.Fatal(err)
	}
	isOurs := func(v string) bool { return strings.HasPrefix(v, "w0-") || strings.HasPrefix(v, "w1-") }
	rep := checkRecords(writers, got, isOurs)
	final := map[recordAddress]string{}
	for _, r := range got {
		final[recordAddress{r.Partition, r.Offset}] = string(r.Value)
	}
	for _, lr := range []*liveReader{assign, group} {
		lr.mu.Lock()
		last := map[int32]int64{}
		for _, r := range lr.got {
			at := recordAddress{r.Partition, r.Offset}
			if v, ok := final[at]; ok && v != string(r.Value) {
				rep.Conflicts = append(rep.Conflicts, fmt.Sprintf("%s-reader p%d@%d:%s|final:%s", lr.name, at.Partition, at.Offset, r.Value, v))
			} else if !ok && at.Offset < ends[at.Partition] {
				rep.Conflicts = append(rep.Conflicts, fmt.Sprintf("%s-reader p%d@%d:%s|final:none", lr.name, at.Partition, at.Offset, r.Value))
			}
			// A group member may re-read from the committed offset after
			// a rebalance; only the assign reader's stream must only move
			// forward.
			if lr == assign {
				if prev, ok := last[r.Partition]; ok && r.Offset <= prev {
					rep.NonMonotonic = append(rep.NonMonotonic, fmt.Sprintf("assign p%d:%d-after-%d", r.Partition, r.Offset, prev))
				}
				last[r.Partition] = r.Offset
			}
		}
		t.Logf("%s reader: %d records, errors %v", lr.name, len(lr.got), lr.errs)
		lr.mu.Unlock()
	}
	wl.groups.checkReceived(got)
	summary := fmt.Sprintf("seed %d: %d faults %v (fault phase %v, checks %v); %s\n  %s%s\n  %s", seed, len(faults), perKind,
		faultPhase.Round(time.Second), (time.Since(start) - faultPhase).Round(time.Second), rep, wl.groups, groupNote, eosRep)
	fmt.Printf("fault: %s\n", summary)
	t.Log(summary)
	if !rep.ok() {
		t.Errorf("seed %d: the checker found anomalies (replay with FAULT_SEEDS=%d): %s\nfaults: %s", seed, seed, rep, strings.Join(faults, "; "))
	}
	if len(diskAnomalies) > 0 {
		t.Errorf("seed %d: a disk fault did not take its node's log dir offline and move its leaderships (replay with FAULT_SEEDS=%d): %s", seed, seed, strings.Join(diskAnomalies, "; "))
	}
	if rep.Acked == 0 {
		t.Errorf("seed %d: nothing was acknowledged", seed)
	}
	if wl.groups.anomalies() > 0 {
		t.Errorf("seed %d: the consumer-group checker found anomalies (replay with FAULT_SEEDS=%d): %s\nfaults: %s", seed, seed, wl.groups, strings.Join(faults, "; "))
	}
	if wl.groups.commits.count() == 0 {
		t.Errorf("seed %d: no offset commit of group %s was acknowledged", seed, commitGroup)
	}
	if !eosRep.ok() {
		t.Errorf("seed %d: the exactly-once checker found anomalies (replay with FAULT_SEEDS=%d): %s\nfaults: %s", seed, seed, eosRep, strings.Join(faults, "; "))
	}
	if eosRep.Committed == 0 {
		t.Errorf("seed %d: no transaction of group %s committed", seed, eosGroup)
	}
}

// reassignOne moves a partition between RF=3 and RF=2: from three
// replicas to two of them, or from two to all three in a random order,
// then asks for the preferred leader. The new replica catches up from the
// leader while the writers go on.
func reassignOne(t *testing.T, ctx context.Context, adm *kadm.Client, topic string, partitions int, p kadm.PartitionDetail, ids []int32, rng *rand.Rand) {
	t.Helper()
	perm := slices.Clone(ids)
	rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	if len(p.Replicas) == len(ids) {
		perm = perm[:len(ids)-1]
	}
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(topic, p.Partition, perm)
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := adm.AlterPartitionAssignments(rctx, req)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("reassign %s-%d to %v: %v", topic, p.Partition, perm, err)
	}
	waitNoReassignment(t, ctx, adm, topic, partitions, 90*time.Second)
	if _, err := adm.ElectLeaders(rctx, kadm.ElectPreferredReplica, kadm.TopicsSet{topic: {p.Partition: {}}}); err != nil {
		t.Logf("preferred election for %s-%d: %v", topic, p.Partition, err)
	}
}

// waitNoReassignment polls until no reassignment of topic is in progress.
func waitNoReassignment(t *testing.T, ctx context.Context, adm *kadm.Client, topic string, partitions int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		set := kadm.TopicsSet{}
		for p := range int32(partitions) {
			set.Add(topic, p)
		}
		rs, err := adm.ListPartitionReassignments(lctx, set)
		cancel()
		if err == nil && len(rs[topic]) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a reassignment of %s still runs after %v: %+v (err %v)", topic, limit, rs, err)
		}
		time.Sleep(200 * time.Millisecond) // polling a remote condition
	}
}

// waitReaderCaughtUp polls until the reader has seen the last offset
// below ends of every partition.
func waitReaderCaughtUp(t *testing.T, r *liveReader, ends map[int32]int64, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		r.mu.Lock()
		seen := map[int32]int64{}
		for _, rec := range r.got {
			seen[rec.Partition] = max(seen[rec.Partition], rec.Offset+1)
		}
		r.mu.Unlock()
		behind := map[int32]int64{}
		for p, e := range ends {
			if seen[p] < e {
				behind[p] = e - seen[p]
			}
		}
		if len(behind) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s reader still behind the end after %v: %v records per partition", r.name, limit, behind)
			return
		}
		time.Sleep(100 * time.Millisecond) // polling a consumer's progress
	}
}
