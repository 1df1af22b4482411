package controller

import (
	"context"
	"slices"
	"testing"
)

// A broker whose log dir is recorded offline but whose partition changes
// never applied (the broker-state record committed, the rest of the plan
// did not) still leads partitions and sits in ISRs. The heartbeat path never
// retries for it, since the broker is already marked offline; the periodic
// session check must move those leaderships and ISR memberships anyway.
func TestReconcileOfflineLogDirStillLeading(t *testing.T) {
	sc := newSessionCluster(t, 3)
	mustCreate(t, sc.c, CreateTopic{Name: "t", NumPartitions: 6, ReplicationFactor: 3})
	if sc.c.Image().leaderships(1) == 0 {
		t.Fatal("broker 1 leads nothing; the placement does not spread leaders")
	}

	// Only the broker-state record of takeLogDirOffline's plan applies.
	br := sc.c.Image().Brokers[1]
	state := &brokerStateRecord{NodeID: 1, Epoch: br.Epoch, LogDirOffline: true}
	sc.c.writeMu.Lock()
	err := firstErr(sc.c.proposeAsActive(context.Background(), []record{state}))
	sc.c.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	im := sc.c.Image()
	if !im.Brokers[1].LogDirOffline || im.leaderships(1) == 0 {
		t.Fatalf("setup: broker 1 %+v leads %d; want a stuck offline leader", im.Brokers[1], im.leaderships(1))
	}
	// A later heartbeat reporting the offline dir does not repair it.
	if _, err := sc.c.BrokerHeartbeat(context.Background(), Heartbeat{
		NodeID: 1, Epoch: sc.epoch[1], MetadataOffset: int64(im.Offset), LogDirOffline: true,
	}); err != nil {
		t.Fatal(err)
	}

	if err := sc.c.ExpireSessions(context.Background()); err != nil {
		t.Fatal(err)
	}
	im = sc.c.Image()
	for i, p := range im.Topics["t"].Partitions {
		if p.Leader == 1 || p.Leader < 0 || slices.Contains(p.ISR, 1) {
			t.Errorf("t-%d: leader %d ISR %v; broker 1 (offline log dir) should be out", i, p.Leader, p.ISR)
		}
	}
	// Converged: another pass plans nothing.
	if recs, err := sc.c.planUnusableCleanup(im); err != nil || len(recs) != 0 {
		t.Fatalf("second pass: %d records, err %v; want none", len(recs), err)
	}
}

// The same for a fenced broker whose fencing record applied alone.
func TestReconcileFencedStillLeading(t *testing.T) {
	sc := newSessionCluster(t, 3)
	mustCreate(t, sc.c, CreateTopic{Name: "t", NumPartitions: 6, ReplicationFactor: 3})
	br := sc.c.Image().Brokers[2]
	sc.c.writeMu.Lock()
	err := firstErr(sc.c.proposeAsActive(context.Background(), []record{&brokerStateRecord{NodeID: 2, Epoch: br.Epoch, Fenced: true}}))
	sc.c.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if sc.c.Image().leaderships(2) == 0 {
		t.Fatal("setup: broker 2 leads nothing")
	}
	if err := sc.c.ExpireSessions(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, p := range sc.c.Image().Topics["t"].Partitions {
		if p.Leader == 2 || p.Leader < 0 || slices.Contains(p.ISR, 2) {
			t.Errorf("t-%d: leader %d ISR %v; fenced broker 2 should be out", i, p.Leader, p.ISR)
		}
	}
}
