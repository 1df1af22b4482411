package tests

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/core/config"
)

// heartbeatCounter counts ConsumerGroupHeartbeat round trips of a client.
type heartbeatCounter struct{ n atomic.Int64 }

func (h *heartbeatCounter) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	if key == 68 && e.Err() == nil {
		h.n.Add(1)
	}
}

// A consumer (KIP-848) group keeps its members, epochs and assignments
// across a broker restart: franz-go members with server-side balancing
// carry on heartbeating without being told UNKNOWN_MEMBER_ID, and no
// partition moves.
func TestGroupConsumerProtocolSurvivesRestart(t *testing.T) {
	addr, dir := fmt.Sprintf("127.0.0.1:%d", freePort(t)), t.TempDir()
	start := func() *restartableBroker {
		cfg := config.Default()
		cfg.DataDir = dir
		cfg.Listeners.Kafka = addr
		cfg.Listeners.HTTP = ""
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
	topic, group := "grp-848-restart", "g-848-restart"
	createTopic(t, addr, topic, 12, nil)
	produceToEach(t, addr, topic, 12, 2)
	as := newAssignments()
	names := []string{"a", "b", "c"}
	counters := map[string]*heartbeatCounter{}
	var members []*kgoMember
	for _, n := range names {
		counters[n] = &heartbeatCounter{}
		members = append(members, startKgoMember(t, addr, group, topic, n, as,
			kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()), kgo.WithHooks(counters[n])))
	}
	eventually(t, 30*time.Second, "three members share 12 partitions", func() error {
		return as.check(names, 12)
	})
	eventually(t, 20*time.Second, "a stable group", func() error {
		if d := describeConsumerGroup(t, addr, group); d.State != "Stable" {
			return fmt.Errorf("state %s", d.State)
		}
		return nil
	})
	before := describeConsumerGroup(t, addr, group)
	as.mu.Lock()
	owners := as.describeLocked()
	as.mu.Unlock()
	events := as.eventCount(names...)

	b.Stop()
	beats := map[string]int64{}
	for _, n := range names {
		beats[n] = counters[n].n.Load()
	}
	start()
	// Every member heartbeats several times against the restarted broker.
	eventually(t, 20*time.Second, "heartbeats after the restart", func() error {
		for _, n := range names {
			if got := counters[n].n.Load() - beats[n]; got < 5 {
				return fmt.Errorf("member %s: %d heartbeats", n, got)
			}
		}
		return nil
	})
	produceToEach(t, addr, topic, 12, 1)
	eventually(t, 20*time.Second, "records produced after the restart read", func() error {
		n := 0
		for _, m := range members {
			n += len(m.read())
		}
		if n < 36 {
			return fmt.Errorf("%d records read", n)
		}
		return nil
	})
	after := describeConsumerGroup(t, addr, group)
	if after.Epoch != before.Epoch || after.AssignmentEpoch != before.AssignmentEpoch || after.State != "Stable" ||
		len(after.Members) != 3 {
		t.Fatalf("after the restart: epoch %d assignment epoch %d state %s, %d members; before: epoch %d assignment epoch %d",
			after.Epoch, after.AssignmentEpoch, after.State, len(after.Members), before.Epoch, before.AssignmentEpoch)
	}
	for i, m := range after.Members {
		bm := before.Members[i]
		if m.MemberID != bm.MemberID || m.MemberEpoch != bm.MemberEpoch {
			t.Errorf("member %s at epoch %d, was %s at %d", m.MemberID, m.MemberEpoch, bm.MemberID, bm.MemberEpoch)
		}
	}
	as.mu.Lock()
	ownersAfter := as.describeLocked()
	as.mu.Unlock()
	if ownersAfter != owners || as.eventCount(names...) != events {
		t.Fatalf("assignments moved across the restart: %s (%d events), before %s (%d events)",
			ownersAfter, as.eventCount(names...), owners, events)
	}
}
