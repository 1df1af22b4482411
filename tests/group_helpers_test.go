package tests

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/server"
)

// groupConfig makes group timeouts short enough for tests: no initial
// rebalance delay, sessions from 500ms, consumer group heartbeats every
// 200ms.
func groupConfig(c *config.Config) {
	c.Groups.GroupInitialRebalanceDelayMs = 0
	c.Groups.GroupMinSessionTimeoutMs = 500
	c.Groups.GroupConsumerHeartbeatIntervalMs = 200
	c.Groups.OffsetsTopicPartitions = 5
}

// restartableBroker is an in-process broker whose data directory outlives
// it, so that it can be stopped and started again.
type restartableBroker struct {
	t       *testing.T
	Addr    string
	DataDir string
	cancel  context.CancelFunc
	done    chan error
}

func startRestartableBroker(t *testing.T, dataDir string, modify ...func(*config.Config)) *restartableBroker {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Listeners.Kafka = "127.0.0.1:0"
	cfg.Listeners.HTTP = ""
	groupConfig(&cfg)
	for _, m := range modify {
		m(&cfg)
	}
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop)
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := server.New(cfg, server.Options{Logger: logger})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &restartableBroker{t: t, Addr: srv.KafkaAddr(), DataDir: dataDir, cancel: cancel, done: make(chan error, 1)}
	go func() { b.done <- srv.Run(ctx) }()
	t.Cleanup(b.Stop)
	waitForBroker(t, b.Addr, b.done)
	return b
}

// Stop stops the broker (once) and checks that it shut down cleanly.
func (b *restartableBroker) Stop() {
	if b.cancel == nil {
		return
	}
	b.cancel()
	b.cancel = nil
	select {
	case err := <-b.done:
		if err != nil {
			b.t.Errorf("broker Run returned %v at shutdown", err)
		}
	case <-time.After(30 * time.Second):
		b.t.Errorf("broker did not stop within 30s")
	}
}

// produceToEach writes n records to every partition of topic, values
// "<p>-<i>".
func produceToEach(t *testing.T, addr, topic string, partitions int32, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	var recs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("%d-%d", p, i))})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// assignments tracks which partitions each member of a group holds.
type assignments struct {
	mu     sync.Mutex
	owners map[string]map[int32]bool // member name -> partitions
	events map[string]int            // assignment changes seen per member
}

func newAssignments() *assignments {
	return &assignments{owners: map[string]map[int32]bool{}, events: map[string]int{}}
}

func (a *assignments) set(member string, parts []int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := map[int32]bool{}
	for _, p := range parts {
		m[p] = true
	}
	a.owners[member] = m
	a.events[member]++
}

func (a *assignments) add(member string, parts []int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.owners[member] == nil {
		a.owners[member] = map[int32]bool{}
	}
	for _, p := range parts {
		a.owners[member][p] = true
	}
	a.events[member]++
}

func (a *assignments) remove(member string, parts []int32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range parts {
		delete(a.owners[member], p)
	}
	a.events[member]++
}

func (a *assignments) drop(member string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.owners, member)
}

// eventCount is how many assignment changes members have seen.
func (a *assignments) eventCount(members ...string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, m := range members {
		n += a.events[m]
	}
	return n
}

// check reports whether members (exactly these) together own every
// partition 0..n-1, each once, every member at least one.
func (a *assignments) check(members []string, n int32) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	seen := map[int32]string{}
	for _, m := range members {
		parts := a.owners[m]
		if len(parts) == 0 {
			return fmt.Errorf("member %s owns nothing (%s)", m, a.describeLocked())
		}
		for p := range parts {
			if other, dup := seen[p]; dup {
				return fmt.Errorf("partition %d owned by %s and %s", p, other, m)
			}
			seen[p] = m
		}
	}
	for name, parts := range a.owners {
		if len(parts) > 0 && !contains(members, name) {
			return fmt.Errorf("member %s should own nothing (%s)", name, a.describeLocked())
		}
	}
	if int32(len(seen)) != n {
		return fmt.Errorf("%d of %d partitions owned (%s)", len(seen), n, a.describeLocked())
	}
	return nil
}

func (a *assignments) describeLocked() string {
	var names []string
	for n := range a.owners {
		names = append(names, n)
	}
	sort.Strings(names)
	s := ""
	for _, n := range names {
		var ps []int
		for p := range a.owners[n] {
			ps = append(ps, int(p))
		}
		sort.Ints(ps)
		s += fmt.Sprintf("%s:%v ", n, ps)
	}
	return s
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// eventually polls cond until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v: %v", what, timeout, err)
		}
		<-tick.C
	}
}

// describeGroup returns a group's description through kadm.
func describeGroup(t *testing.T, addr, group string) kadm.DescribedGroup {
	t.Helper()
	adm := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dg, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatalf("describe group: %v", err)
	}
	return dg[group]
}

// kadmOffset is kadm's fetched offset, named for brevity.
type kadmOffset = kadm.OffsetResponse
