package tests

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sigtermExitBound is how long a node may take to exit after SIGTERM: the
// cluster's controlled_shutdown_timeout_ms (10 s in startChildCluster's
// configs) plus the time to stop serving and close its logs.
const sigtermExitBound = 20 * time.Second

// TestSIGTERMUnderProduceLoad stops the nodes of a 3-node cluster one after
// another with SIGTERM while franz-go producers keep writing acks=all to an
// RF 3 topic, and requires each to exit within sigtermExitBound, the last
// one too, when no other node is left to take its leaderships or follow
// it. Requests in flight may fail; what was acknowledged must survive:
// after a restart of every node each acknowledged value is read back.
func TestSIGTERMUnderProduceLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	const (
		topic      = "sigterm"
		partitions = 6
	)
	c := startChildCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	adm := kadm.NewClient(c.client())
	two := "2"
	createReplicated(t, ctx, adm, topic, partitions, map[string]*string{"min.insync.replicas": &two})
	c.waitMetadata("full ISR", 60*time.Second, func(md kadm.Metadata) bool { return fullISR(md, topic, partitions) })

	var (
		mu    sync.Mutex // guards acked
		acked = map[string]bool{}
	)
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var clients []*kgo.Client
	for w := range 4 {
		cl := c.client(
			kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.ProducerLinger(0),
			kgo.RecordDeliveryTimeout(20*time.Second),
			kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
			kgo.MaxBufferedRecords(2000),
		)
		clients = append(clients, cl)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; load.Err() == nil; i++ {
				v := fmt.Sprintf("w%d-%09d", w, i)
				cl.Produce(load, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i % 31)), Value: []byte(v)},
					func(_ *kgo.Record, err error) {
						if err == nil {
							mu.Lock()
							acked[v] = true
							mu.Unlock()
						}
					})
			}
		}()
	}
	ackedNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	// Under load before each stop: some acknowledgements since the last.
	waitAcks := func(more int) {
		t.Helper()
		want := ackedNow() + more
		deadline := time.Now().Add(60 * time.Second)
		for ackedNow() < want {
			if time.Now().After(deadline) {
				t.Fatalf("only %d of %d acknowledgements within 60s", ackedNow(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	for _, id := range []int32{1, 2, 3} {
		if id < 3 {
			waitAcks(2000)
		} else {
			// The last node: no follower is left, so acks=all writes wait
			// on an ISR that cannot grow; keep them coming anyway.
			time.Sleep(500 * time.Millisecond)
		}
		nd := c.nodes[id]
		proc := nd.proc
		nd.proc = nil
		c.track(nd)
		start := time.Now()
		_ = proc.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-proc.done:
			t.Logf("node %d exited %s after SIGTERM (%d acknowledged so far): %v", id, time.Since(start).Round(time.Millisecond), ackedNow(), proc.err)
			if proc.err != nil {
				t.Errorf("node %d exited with %v after SIGTERM", id, proc.err)
			}
		case <-time.After(sigtermExitBound):
			_ = proc.cmd.Process.Signal(syscall.SIGQUIT) // dumps every goroutine
			select {
			case <-proc.done:
			case <-time.After(10 * time.Second):
				_ = proc.cmd.Process.Kill()
				<-proc.done
			}
			out := proc.logs.String()
			t.Fatalf("node %d did not exit within %s of SIGTERM under produce load; its output ends:\n%s",
				id, sigtermExitBound, out[max(0, len(out)-300000):])
		}
	}
	stopLoad()
	wg.Wait()
	// With every node down the buffered records would wait forever;
	// closing fails them (unacknowledged, so not checked).
	for _, cl := range clients {
		cl.Close()
	}

	// Nothing acknowledged is lost.
	done := make(chan struct{})
	for _, id := range []int32{1, 2, 3} {
		go func() {
			c.nodes[id].proc = startChildBrokerAsync(t, c.nodes[id])
			c.track(c.nodes[id])
			done <- struct{}{}
		}()
	}
	for range 3 {
		<-done
	}
	c.waitMetadata("leaders after the restart", 90*time.Second, func(md kadm.Metadata) bool {
		tm, ok := md.Topics[topic]
		if !ok || len(tm.Partitions) != partitions {
			return false
		}
		for _, p := range tm.Partitions {
			if p.Leader < 0 {
				return false
			}
		}
		return true
	})
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	recs, left, err := drainAll(ctx, c.addrs(), topic, lastOffsets(want), 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("partitions not read to their end: %v", left)
	}
	seen := make(map[string]bool, len(recs))
	for _, r := range recs {
		seen[string(r.Value)] = true
	}
	mu.Lock()
	defer mu.Unlock()
	lost := 0
	for v := range acked {
		if !seen[v] {
			if lost < 10 {
				t.Errorf("acknowledged %s is not in the log after the restart", v)
			}
			lost++
		}
	}
	t.Logf("%d acknowledged, %d read back, %d lost", len(acked), len(recs), lost)
	if lost > 0 {
		t.Errorf("%d acknowledged records lost", lost)
	}
}

// TestSIGTERMUnderProduceLoadOneNode is the same for a single node (fsync
// durability, the default), stopped and restarted on its data directory a
// few times while producers keep writing.
func TestSIGTERMUnderProduceLoadOneNode(t *testing.T) {
	const (
		topic  = "sigterm1"
		cycles = 3
	)
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfgPath := writeBrokerConfig(t, dir, dir+"/data", addr)
	b := startChildBroker(t, cfgPath, addr)
	createTopic(t, addr, topic, 6, nil)
	var (
		mu    sync.Mutex // guards acked
		acked = map[string]bool{}
	)
	for cycle := range cycles {
		load, stopLoad := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var clients []*kgo.Client
		var n sync.WaitGroup
		n.Add(1)
		var first sync.Once
		for w := range 4 {
			cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0),
				kgo.RecordDeliveryTimeout(20*time.Second), kgo.MaxBufferedRecords(2000))
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, cl)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; load.Err() == nil; i++ {
					v := fmt.Sprintf("c%d-w%d-%09d", cycle, w, i)
					cl.Produce(load, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i % 31)), Value: []byte(v)},
						func(_ *kgo.Record, err error) {
							if err == nil {
								mu.Lock()
								acked[v] = true
								if len(acked) >= (cycle+1)*5000 {
									first.Do(n.Done)
								}
								mu.Unlock()
							}
						})
				}
			}()
		}
		n.Wait()
		start := time.Now()
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.done:
			t.Logf("cycle %d: exited %s after SIGTERM: %v", cycle, time.Since(start).Round(time.Millisecond), b.err)
			if b.err != nil {
				t.Errorf("exited with %v after SIGTERM", b.err)
			}
		case <-time.After(sigtermExitBound):
			_ = b.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-b.done:
			case <-time.After(10 * time.Second):
				_ = b.cmd.Process.Kill()
				<-b.done
			}
			out := b.logs.String()
			t.Fatalf("cycle %d: did not exit within %s of SIGTERM under produce load; its output ends:\n%s",
				cycle, sigtermExitBound, out[max(0, len(out)-300000):])
		}
		stopLoad()
		wg.Wait()
		for _, cl := range clients {
			cl.Close()
		}
		b = startChildBroker(t, cfgPath, addr)
	}
	ends := map[int32]int64{}
	acl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer acl.Close()
	adm := kadm.NewClient(acl)
	lo, err := adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	lo.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	recs, left, err := drainAll(context.Background(), []string{addr}, topic, lastOffsets(ends), 90*time.Second)
	if err != nil || len(left) > 0 {
		t.Fatalf("drain: %v, partitions not read to their end %v", err, left)
	}
	seen := make(map[string]bool, len(recs))
	for _, r := range recs {
		seen[string(r.Value)] = true
	}
	mu.Lock()
	defer mu.Unlock()
	lost := 0
	for v := range acked {
		if !seen[v] {
			lost++
		}
	}
	t.Logf("%d acknowledged, %d read back, %d lost", len(acked), len(recs), lost)
	if lost > 0 {
		t.Errorf("%d acknowledged records lost", lost)
	}
}

// TestSIGTERMWithLogDirOffline stops, under produce load, a node whose log
// dir went offline (every fsync failing, through the errorfs build) after
// its leaderships moved, as the fault suite's disk faults do.
func TestSIGTERMWithLogDirOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	const (
		topic      = "sigterm-disk"
		partitions = 6
	)
	c := startChildClusterNet(t, 3, false, true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	adm := kadm.NewClient(c.client())
	two := "2"
	createReplicated(t, ctx, adm, topic, partitions, map[string]*string{"min.insync.replicas": &two})
	c.waitMetadata("full ISR", 60*time.Second, func(md kadm.Metadata) bool { return fullISR(md, topic, partitions) })

	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stopLoad()
		wg.Wait()
	}()
	var acks sync.WaitGroup
	acks.Add(1)
	var once sync.Once
	for w := range 4 {
		cl := c.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0),
			kgo.RecordDeliveryTimeout(20*time.Second), kgo.MaxBufferedRecords(2000))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; load.Err() == nil; i++ {
				cl.Produce(load, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("w%d-%09d", w, i))},
					func(_ *kgo.Record, err error) {
						if err == nil && i > 1000 {
							once.Do(acks.Done)
						}
					})
			}
		}()
	}
	acks.Wait()
	const target = 1
	if err := c.armDisk(target, diskFaultRules["disk-fsync-eio"]); err != nil {
		t.Fatal(err)
	}
	c.waitMetadata("node 1 offline", 60*time.Second, func(md kadm.Metadata) bool {
		ok, _ := diskOffline(md, target)
		return ok
	})
	nd := c.nodes[target]
	proc := nd.proc
	nd.proc = nil
	c.track(nd)
	start := time.Now()
	_ = proc.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-proc.done:
		t.Logf("node %d (log dir offline) exited %s after SIGTERM: %v", target, time.Since(start).Round(time.Millisecond), proc.err)
		if proc.err != nil {
			t.Errorf("node %d exited with %v after SIGTERM", target, proc.err)
		}
	case <-time.After(sigtermExitBound):
		_ = proc.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-proc.done:
		case <-time.After(10 * time.Second):
			_ = proc.cmd.Process.Kill()
			<-proc.done
		}
		out := proc.logs.String()
		t.Fatalf("node %d (log dir offline) did not exit within %s of SIGTERM; its output ends:\n%s",
			target, sigtermExitBound, out[max(0, len(out)-300000):])
	}
}
