package tests

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoMember is a franz-go group consumer that records its assignment and
// the values it reads.
type kgoMember struct {
	name   string
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	values []string
}

func startKgoMember(t *testing.T, addr, group, topic, name string, as *assignments, opts ...kgo.Opt) *kgoMember {
	t.Helper()
	m := &kgoMember{name: name, done: make(chan struct{})}
	all := append([]kgo.Opt{
		kgo.SeedBrokers(addr), kgo.ClientID(name), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(2 * time.Second), kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.RebalanceTimeout(5 * time.Second),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) { as.add(name, a[topic]) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) { as.remove(name, r[topic]) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, r map[string][]int32) { as.remove(name, r[topic]) }),
	}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatal(err)
	}
	m.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				m.mu.Lock()
				m.values = append(m.values, string(r.Value))
				m.mu.Unlock()
			})
		}
	}()
	t.Cleanup(m.close)
	return m
}

// close stops polling and closes the client (a non-static member leaves).
func (m *kgoMember) close() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	<-m.done
	m.cl.Close()
	m.cancel = nil
}

func (m *kgoMember) read() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.values...)
}

func TestGroupFranzThreeMembersShareTwelvePartitions(t *testing.T) {
	b := startBroker(t, groupConfig)
	const topic, group = "grp-franz", "g-franz"
	createTopic(t, b.Addr, topic, 12, nil)
	produceToEach(t, b.Addr, topic, 12, 5)
	as := newAssignments()
	a := startKgoMember(t, b.Addr, group, topic, "a", as)
	bm := startKgoMember(t, b.Addr, group, topic, "b", as)
	c := startKgoMember(t, b.Addr, group, topic, "c", as)
	eventually(t, 20*time.Second, "three members share 12 partitions", func() error {
		return as.check([]string{"a", "b", "c"}, 12)
	})
	eventually(t, 20*time.Second, "all 60 records read", func() error {
		if n := len(a.read()) + len(bm.read()) + len(c.read()); n < 60 {
			return fmt.Errorf("%d records read", n)
		}
		return nil
	})

	// A member leaves: its partitions move to the others well within the
	// session timeout.
	left := time.Now()
	c.close()
	as.drop("c")
	eventually(t, 2*time.Second, "two members share 12 partitions after a leave", func() error {
		return as.check([]string{"a", "b"}, 12)
	})
	t.Logf("partitions moved %v after the leave", time.Since(left).Round(time.Millisecond))

	dg := describeGroup(t, b.Addr, group)
	if dg.State != "Stable" || len(dg.Members) != 2 || dg.Protocol == "" {
		t.Fatalf("describe = state %s, %d members, protocol %q", dg.State, len(dg.Members), dg.Protocol)
	}
}

func TestGroupFranzKilledMemberIsEvicted(t *testing.T) {
	b := startBroker(t, groupConfig)
	const topic, group = "grp-kill", "g-kill"
	createTopic(t, b.Addr, topic, 12, nil)
	as := newAssignments()
	startKgoMember(t, b.Addr, group, topic, "a", as)
	startKgoMember(t, b.Addr, group, topic, "b", as)
	// A static member does not leave when its client closes: closing it is
	// what a killed process looks like to the coordinator.
	victim := startKgoMember(t, b.Addr, group, topic, "victim", as, kgo.InstanceID("victim-1"))
	eventually(t, 20*time.Second, "three members share 12 partitions", func() error {
		return as.check([]string{"a", "b", "victim"}, 12)
	})
	victim.close()
	as.drop("victim")
	// Its partitions stay unassigned until the 2s session runs out, then move.
	eventually(t, 10*time.Second, "the killed member is evicted", func() error {
		return as.check([]string{"a", "b"}, 12)
	})
	dg := describeGroup(t, b.Addr, group)
	if len(dg.Members) != 2 {
		t.Fatalf("members after eviction = %d", len(dg.Members))
	}
}

func TestGroupFranzStaticMemberRejoinsWithoutRebalance(t *testing.T) {
	b := startBroker(t, groupConfig)
	const topic, group = "grp-static", "g-static"
	createTopic(t, b.Addr, topic, 12, nil)
	as := newAssignments()
	var members []*kgoMember
	for _, n := range []string{"s1", "s2", "s3"} {
		members = append(members, startKgoMember(t, b.Addr, group, topic, n, as,
			kgo.InstanceID(n), kgo.SessionTimeout(10*time.Second)))
	}
	eventually(t, 20*time.Second, "three static members share 12 partitions", func() error {
		return as.check([]string{"s1", "s2", "s3"}, 12)
	})
	// Once the group is stable, restart s3 with the same instance id.
	eventually(t, 10*time.Second, "the group is stable", func() error {
		if st := describeGroup(t, b.Addr, group).State; st != "Stable" {
			return fmt.Errorf("state %s", st)
		}
		return nil
	})
	as.mu.Lock()
	before := map[int32]bool{}
	for p := range as.owners["s3"] {
		before[p] = true
	}
	as.mu.Unlock()
	others := as.eventCount("s1", "s2")
	members[2].close()
	as.drop("s3")
	startKgoMember(t, b.Addr, group, topic, "s3", as, kgo.InstanceID("s3"), kgo.SessionTimeout(10*time.Second))
	eventually(t, 10*time.Second, "the restarted static member gets its partitions back", func() error {
		return as.check([]string{"s1", "s2", "s3"}, 12)
	})
	as.mu.Lock()
	after := as.owners["s3"]
	same := len(after) == len(before)
	for p := range before {
		same = same && after[p]
	}
	as.mu.Unlock()
	if !same {
		t.Fatalf("s3 had %v, got %v after restarting", before, after)
	}
	// s1 and s2 were neither revoked nor reassigned: no rebalance happened.
	if n := as.eventCount("s1", "s2") - others; n != 0 {
		t.Fatalf("s1 and s2 saw %d assignment changes during the static restart, want 0", n)
	}
}
