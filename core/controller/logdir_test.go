package controller

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// A broker that reports its log dir offline loses every leadership to
// another ISR member and leaves every ISR, stays out of them while its
// registration lasts (even unfenced and heartbeating), and comes back only by
// registering again.
func TestOfflineLogDirMovesLeadership(t *testing.T) {
	sc := newSessionCluster(t, 3)
	mustCreate(t, sc.c, CreateTopic{Name: "t", NumPartitions: 6, ReplicationFactor: 3})
	before, _ := sc.c.Image().Topic("t")
	if sc.c.Image().leaderships(1) == 0 {
		t.Fatal("broker 1 leads nothing; the placement does not spread leaders")
	}

	r, err := sc.c.BrokerHeartbeat(context.Background(), Heartbeat{
		NodeID: 1, Epoch: sc.epoch[1], MetadataOffset: int64(sc.c.Image().Offset), LogDirOffline: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	im := sc.c.Image()
	if !im.Brokers[1].LogDirOffline || im.Usable(1) {
		t.Fatalf("broker 1: %+v usable=%v, want its log dir offline and unusable", im.Brokers[1], im.Usable(1))
	}
	if r.Fenced || r.ShouldShutdown {
		t.Fatalf("reply %+v: an offline log dir neither fences nor shuts the broker down", r)
	}
	for i, p := range im.Topics["t"].Partitions {
		old := before.Partitions[i]
		if p.Leader == 1 || p.Leader < 0 || slices.Contains(p.ISR, 1) {
			t.Errorf("t-%d: leader %d ISR %v; broker 1 should be out", i, p.Leader, p.ISR)
		}
		if old.Leader == 1 && p.LeaderEpoch != old.LeaderEpoch+1 {
			t.Errorf("t-%d: leader epoch %d, want %d", i, p.LeaderEpoch, old.LeaderEpoch+1)
		}
	}

	// Later heartbeats, including ones that would unfence it, and an ISR
	// expansion do not bring it back.
	sc.heartbeat(1, false)
	if !sc.c.Image().Brokers[1].LogDirOffline {
		t.Fatal("an ordinary heartbeat cleared the offline log dir")
	}
	p := sc.partition("t", 0)
	_, err = sc.c.alterPartition(context.Background(), AlterPartitionRequest{BrokerID: p.Leader, BrokerEpoch: -1,
		Topic: "t", Partition: 0, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: append(slices.Clone(p.ISR), 1)})
	if !errors.Is(err, ErrIneligibleReplica) {
		t.Fatalf("ISR expansion to a broker with an offline log dir: %v, want ErrIneligibleReplica", err)
	}

	// A restart registers it again with a working disk.
	epoch, err := sc.c.RegisterBrokerFenced(context.Background(), Broker{NodeID: 1, Host: "localhost", Port: 9091})
	if err != nil {
		t.Fatal(err)
	}
	sc.epoch[1] = epoch
	sc.heartbeat(1, false)
	if im := sc.c.Image(); im.Brokers[1].LogDirOffline || !im.Usable(1) {
		t.Fatalf("after registering again: %+v", im.Brokers[1])
	}
}

// A partition whose ISR is the offline broker alone has no other replica to
// move to: as Kafka's controller, it is left without a leader (its ISR keeps
// the last member for a later clean election) instead of staying led by a
// broker that can no longer write.
func TestOfflineLogDirSoleISRMemberLosesLeadership(t *testing.T) {
	sc := newSessionCluster(t, 3)
	mustCreate(t, sc.c, CreateTopic{Name: "t", NumPartitions: 6, ReplicationFactor: 3})
	var idx int32 = -1
	for _, p := range sc.c.Image().Topics["t"].Partitions {
		if p.Leader == 1 {
			idx = p.Index
			break
		}
	}
	if idx < 0 {
		t.Fatal("broker 1 leads nothing")
	}
	p := sc.partition("t", idx)
	if _, err := sc.c.alterPartition(context.Background(), AlterPartitionRequest{BrokerID: 1, BrokerEpoch: -1,
		Topic: "t", Partition: idx, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.c.BrokerHeartbeat(context.Background(), Heartbeat{
		NodeID: 1, Epoch: sc.epoch[1], MetadataOffset: int64(sc.c.Image().Offset), LogDirOffline: true,
	}); err != nil {
		t.Fatal(err)
	}
	sc.heartbeat(1, false)
	sc.heartbeat(2, false)
	sc.heartbeat(3, false)
	if got := sc.partition("t", idx); got.Leader == 1 {
		t.Fatalf("t-%d: leader %d ISR %v after its sole ISR member's log dir went offline, want no leader", idx, got.Leader, got.ISR)
	}
}
