package controller

import (
	"context"
	"slices"
	"testing"
)

// shutDown runs broker id's controlled shutdown to its end.
func (sc *sessionCluster) shutDown(id int32) {
	sc.t.Helper()
	for range 5 {
		if sc.heartbeat(id, true).ShouldShutdown {
			return
		}
	}
	sc.t.Fatalf("broker %d: controlled shutdown did not complete", id)
}

// reregister registers broker id again with the given previous broker
// epoch and unfences it.
func (sc *sessionCluster) reregister(id int32, previous int64) {
	sc.t.Helper()
	epoch, err := sc.c.RegisterBrokerFenced(context.Background(), Broker{NodeID: id, Host: "localhost", Port: 9090 + id, PreviousEpoch: previous})
	if err != nil {
		sc.t.Fatalf("RegisterBrokerFenced(%d): %v", id, err)
	}
	sc.epoch[id] = epoch
	if sc.heartbeat(id, false).Fenced {
		sc.t.Fatalf("broker %d still fenced after a caught-up heartbeat", id)
	}
}

// TestELRRegistrationAndLastKnownLeader: a broker that registers again
// after a clean shutdown (its previous broker epoch is the registered one)
// stays an eligible leader replica; one whose previous epoch differs (a
// crash) leaves every ISR and ELR, as Kafka's unclean shutdown handling; a
// partition whose ISR and ELR are empty elects its last known leader once
// it is back; a min.insync.replicas change clears the ELR.
func TestELRRegistrationAndLastKnownLeader(t *testing.T) {
	sc := newSessionCluster(t, 3)
	mustCreate(t, sc.c,
		CreateTopic{Name: "t", Assignments: map[int32][]int32{0: {1, 2, 3}}, NumPartitions: -1, ReplicationFactor: -1,
			Configs: map[string]string{"min.insync.replicas": "2"}},
		CreateTopic{Name: "solo", Assignments: map[int32][]int32{0: {3}}, NumPartitions: -1, ReplicationFactor: -1})

	sc.shutDown(3)
	sc.shutDown(2)
	if p := sc.partition("t", 0); p.Leader != 1 || !slices.Equal(p.ISR, []int32{1}) || !slices.Equal(p.ELR, []int32{2}) {
		t.Fatalf("after 3 and 2 shut down: %+v, want leader 1, ISR [1], ELR [2]", p)
	}
	if p := sc.partition("solo", 0); p.Leader != -1 || len(p.ISR) != 0 || !slices.Equal(p.ELR, []int32{3}) || !slices.Equal(p.LastKnownELR, []int32{3}) {
		t.Fatalf("solo after 3 shut down: %+v, want leaderless, ISR [], ELR [3], last known [3]", p)
	}

	// 2 restarts cleanly: still eligible.
	sc.reregister(2, sc.epoch[2])
	if p := sc.partition("t", 0); !slices.Equal(p.ELR, []int32{2}) {
		t.Fatalf("after 2 registered cleanly: ELR %v, want [2]", p.ELR)
	}
	// 3 restarts after a crash: it leaves solo's ELR, and, the ISR and ELR
	// being empty, is elected as solo's last known leader.
	sc.reregister(3, -1)
	if p := sc.partition("solo", 0); p.Leader != 3 || !slices.Equal(p.ISR, []int32{3}) || len(p.ELR) != 0 || len(p.LastKnownELR) != 0 {
		t.Fatalf("solo after 3 came back uncleanly: %+v, want led by 3 with ISR [3] and no ELR", p)
	}

	// The leader 1 shuts down: the ELR member 2 is elected, 1 becomes
	// eligible in its place.
	sc.shutDown(1)
	if p := sc.partition("t", 0); p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) || !slices.Equal(p.ELR, []int32{1}) {
		t.Fatalf("after the leader 1 shut down: %+v, want leader 2, ISR [2], ELR [1]", p)
	}
	// 1 comes back after a crash: no longer eligible.
	sc.reregister(1, -1)
	if p := sc.partition("t", 0); p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) || len(p.ELR) != 0 {
		t.Fatalf("after 1 came back uncleanly: %+v, want leader 2, ISR [2], no ELR", p)
	}

	// A min.insync.replicas change clears the ELR it was judged by.
	sc.shutDown(2)
	if p := sc.partition("t", 0); p.Leader != -1 || len(p.ISR) != 0 || !slices.Equal(p.ELR, []int32{2}) || !slices.Equal(p.LastKnownELR, []int32{2}) {
		t.Fatalf("after the leader 2 shut down: %+v, want leaderless, ISR [], ELR [2], last known [2]", p)
	}
	three := "3"
	res := sc.c.AlterConfigs(context.Background(), []AlterConfig{{Resource: ConfigResource{Type: ResourceTopic, Name: "t"},
		Ops: []ConfigOp{{Name: "min.insync.replicas", Value: &three, Op: OpSet}}}}, false)
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if p := sc.partition("t", 0); len(p.ELR) != 0 || len(p.LastKnownELR) != 0 {
		t.Fatalf("after min.insync.replicas changed: %+v, want no ELR and no last known leader", p)
	}
}

// TestElectLeadersWithELR: ElectLeaders takes an ELR member of an empty
// ISR as preferred leader, and an unclean election tries the ELR and the
// last known leader before any other replica.
func TestElectLeadersWithELR(t *testing.T) {
	pol := elrPolicy{enabled: true, minISR: 2}
	im := elrImage(1, 2, 3)
	im.Topics = map[string]*Topic{"t": {Name: "t", Partitions: []Partition{
		{Index: 0, Leader: -1, Replicas: []int32{2, 1, 3}, ELR: []int32{1, 2}, LastKnownELR: []int32{1}},
		{Index: 1, Leader: -1, Replicas: []int32{3, 1, 2}, LastKnownELR: []int32{1}},
	}}}
	ch, err := planElection(im, ElectPreferred, TopicPartition{"t", 0}, pol)
	if err != nil {
		t.Fatal(err)
	}
	if ch.p.Leader != 2 || !slices.Equal(ch.p.ISR, []int32{2}) || !slices.Equal(ch.p.ELR, []int32{1}) || len(ch.p.LastKnownELR) != 0 {
		t.Fatalf("preferred from the ELR: %+v, want leader 2, ISR [2], ELR [1]", ch.p)
	}
	if _, err := planElection(im, ElectPreferred, TopicPartition{"t", 0}, elrPolicy{minISR: 2}); err == nil {
		t.Fatal("ELR off: the preferred replica outside the ISR was elected")
	}
	ch, err = planElection(im, ElectUnclean, TopicPartition{"t", 0}, pol)
	if err != nil || ch.p.Leader != 2 || !slices.Equal(ch.p.ELR, []int32{1}) {
		t.Fatalf("unclean with an ELR: %+v, %v; want the first ELR member 2 in replica order, ELR [1]", ch.p, err)
	}
	ch, err = planElection(im, ElectUnclean, TopicPartition{"t", 1}, pol)
	if err != nil || ch.p.Leader != 1 || !slices.Equal(ch.p.ISR, []int32{1}) {
		t.Fatalf("unclean with a last known leader: %+v, %v; want 1 before the first replica 3", ch.p, err)
	}
}

// TestReassignmentCancelElectsFromELR: cancelling a reassignment whose
// adding replica was the whole ISR elects an eligible leader replica of
// the original ones instead of leaving the partition leaderless.
func TestReassignmentCancelElectsFromELR(t *testing.T) {
	pol := elrPolicy{enabled: true, minISR: 2}
	im := elrImage(1, 2, 3)
	im.Brokers[4] = Broker{NodeID: 4}
	im.Topics = map[string]*Topic{"t": {Name: "t", Partitions: []Partition{
		{Index: 0, Leader: 4, Replicas: []int32{4, 1, 2}, AddingReplicas: []int32{4}, ISR: []int32{4}, ELR: []int32{1}},
	}}}
	ch, err := planReassignment(im, Reassignment{Topic: "t", Partition: 0}, pol)
	if err != nil {
		t.Fatal(err)
	}
	if ch.p.Leader != 1 || !slices.Equal(ch.p.ISR, []int32{1}) || !slices.Equal(ch.p.Replicas, []int32{1, 2}) || len(ch.p.ELR) != 0 {
		t.Fatalf("after the cancel: %+v, want leader 1 from the ELR, ISR [1], replicas [1 2]", ch.p)
	}
}
