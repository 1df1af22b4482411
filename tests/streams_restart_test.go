package tests

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/gregorbroker/gregor/core/config"
)

// streamsPair joins two raw streams members and heartbeats them until they
// split the word count's 8 tasks at one epoch.
func streamsPair(t *testing.T, cl *kgo.Client, group string) (*streamsMember, *streamsMember) {
	t.Helper()
	a := &streamsMember{id: "member-a", process: "process-a"}
	b := &streamsMember{id: "member-b", process: "process-b"}
	eventually(t, 60*time.Second, "a and b split the tasks", func() error {
		for _, m := range []*streamsMember{a, b} {
			if _, err := m.tryHeartbeat(t, cl, group); err != nil {
				return err
			}
		}
		if len(a.tasks()) != 4 || len(b.tasks()) != 4 || a.epoch != b.epoch || len(a.status)+len(b.status) != 0 {
			return fmt.Errorf("a %v at %d (%v), b %v at %d (%v)", a.tasks(), a.epoch, a.status, b.tasks(), b.epoch, b.status)
		}
		return nil
	})
	return a, b
}

// carriesOn heartbeats the members until the coordinator answers again, and
// checks that each kept its epoch and its tasks.
func carriesOn(t *testing.T, cl *kgo.Client, group string, members ...*streamsMember) {
	t.Helper()
	type was struct {
		epoch int32
		tasks []string
	}
	before := map[string]was{}
	for _, m := range members {
		before[m.id] = was{m.epoch, m.tasks()}
	}
	for _, m := range members {
		eventually(t, 60*time.Second, m.id+" heartbeats the new coordinator", func() error {
			_, err := m.tryHeartbeat(t, cl, group)
			return err
		})
		if b := before[m.id]; m.epoch != b.epoch || !slices.Equal(m.tasks(), b.tasks) {
			t.Fatalf("%s after the move: epoch %d tasks %v, was epoch %d tasks %v", m.id, m.epoch, m.tasks(), b.epoch, b.tasks)
		}
	}
	d := describeStreamsGroup(t, cl, group)
	if d.State != "Stable" || d.Epoch != members[0].epoch || len(d.Members) != len(members) {
		t.Fatalf("after the move: state %s epoch %d, %d members; want Stable at %d", d.State, d.Epoch, len(d.Members), members[0].epoch)
	}
}

// A streams group keeps its members, epochs and tasks across a restart of
// its single broker: the members carry on heartbeating without a rebalance.
func TestStreamsGroupSurvivesRestart(t *testing.T) {
	addr, dir := fmt.Sprintf("127.0.0.1:%d", freePort(t)), t.TempDir()
	start := func() *restartableBroker {
		cfg := config.Default()
		cfg.DataDir, cfg.Listeners.Kafka, cfg.Listeners.HTTP = dir, addr, ""
		groupConfig(&cfg)
		srv, err := newServer(t, cfg)
		if err != nil {
			t.Fatalf("server.New: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		b := &restartableBroker{t: t, Addr: addr, DataDir: dir, cancel: cancel, done: make(chan error, 1)}
		go func() { b.done <- srv.Run(ctx) }()
		t.Cleanup(b.Stop)
		waitForBroker(t, addr, b.done)
		return b
	}
	b := start()
	const group = "wc-app"
	createTopic(t, addr, "wc-input", 4, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(kversion.V4_4_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	a, bm := streamsPair(t, cl, group)
	if code := streamsCommit(t, cl, group, a.id, a.epoch); code != 0 {
		t.Fatalf("commit before the restart: %d", code)
	}
	b.Stop()
	start()
	carriesOn(t, cl, group, a, bm)
	if code := streamsCommit(t, cl, group, a.id, a.epoch); code != 0 {
		t.Fatalf("commit at the member's epoch after the restart: %d", code)
	}
}

// A streams group survives the loss of its coordinator in a three-node
// cluster: the new coordinator loads the group from the replicated
// __consumer_offsets partition and the members carry on at their epochs.
func TestStreamsGroupSurvivesCoordinatorFailover(t *testing.T) {
	nodes := startCluster(t, 3, groupConfig)
	var seeds []string
	for _, nd := range nodes {
		seeds = append(seeds, nd.addr)
	}
	const group = "wc-app"
	createTopic(t, seeds[0], "wc-input", 4, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MaxVersions(kversion.V4_4_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	a, bm := streamsPair(t, cl, group)
	co, err := coordinatorID(cl, group)
	if err != nil {
		t.Fatal(err)
	}
	nodes[co].stop(t)
	var rest []string
	for id, nd := range nodes {
		if id != co {
			rest = append(rest, nd.addr)
		}
	}
	cl2, err := kgo.NewClient(kgo.SeedBrokers(rest...), kgo.MaxVersions(kversion.V4_4_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	eventually(t, 30*time.Second, "a new coordinator", func() error {
		id, err := coordinatorID(cl2, group)
		if err != nil {
			return err
		}
		if id == co {
			return fmt.Errorf("still node %d", co)
		}
		return nil
	})
	carriesOn(t, cl2, group, a, bm)
}
