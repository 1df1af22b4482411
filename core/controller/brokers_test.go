package controller

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock is an injected clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// sessionCluster is a single-voter controller enforcing broker sessions on
// a fake clock, with brokers 1..n registered through the lifecycle path and
// unfenced.
type sessionCluster struct {
	t     *testing.T
	c     *Controller
	clock *fakeClock
	epoch map[int32]int64
}

const testSession = 9 * time.Second

func newSessionCluster(t *testing.T, n int, racks ...string) *sessionCluster {
	t.Helper()
	clock := &fakeClock{now: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
	cfg := testConfig(t, t.TempDir())
	cfg.Now = clock.Now
	// The session loop runs on a real ticker but reads the fake clock,
	// which only the test moves: nothing expires unless the test says so.
	cfg.SessionTimeout = testSession
	sc := &sessionCluster{t: t, c: openReady(t, cfg), clock: clock, epoch: map[int32]int64{}}
	for id := int32(1); id <= int32(n); id++ {
		b := Broker{NodeID: id, Host: "localhost", Port: 9090 + id}
		if len(racks) > 0 {
			b.Rack = racks[int(id-1)%len(racks)]
		}
		epoch, err := sc.c.RegisterBrokerFenced(context.Background(), b)
		if err != nil {
			t.Fatalf("RegisterBrokerFenced(%d): %v", id, err)
		}
		if !sc.c.Image().Brokers[id].Fenced {
			t.Fatalf("broker %d is not fenced after registering", id)
		}
		sc.epoch[id] = epoch
		sc.heartbeat(id, false)
		if sc.c.Image().Brokers[id].Fenced {
			t.Fatalf("broker %d still fenced after a caught-up heartbeat", id)
		}
	}
	return sc
}

func (sc *sessionCluster) heartbeat(id int32, shutdown bool) HeartbeatReply {
	sc.t.Helper()
	r, err := sc.c.BrokerHeartbeat(context.Background(), Heartbeat{
		NodeID: id, Epoch: sc.epoch[id], MetadataOffset: int64(sc.c.Image().Offset), WantShutdown: shutdown,
	})
	if err != nil {
		sc.t.Fatalf("heartbeat %d: %v", id, err)
	}
	return r
}

func (sc *sessionCluster) partition(topic string, p int32) Partition {
	sc.t.Helper()
	tp, ok := sc.c.Image().Topic(topic)
	if !ok {
		sc.t.Fatalf("no topic %q", topic)
	}
	return tp.Partitions[p]
}

func TestUnfenceNeedsCatchUp(t *testing.T) {
	sc := newSessionCluster(t, 1)
	epoch, err := sc.c.RegisterBrokerFenced(context.Background(), Broker{NodeID: 2, Host: "h", Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sc.c.BrokerHeartbeat(context.Background(), Heartbeat{NodeID: 2, Epoch: epoch, MetadataOffset: epoch - 1})
	if err != nil || r.CaughtUp || !r.Fenced {
		t.Fatalf("behind its registration: %+v, %v; want fenced and not caught up", r, err)
	}
	if _, err := sc.c.BrokerHeartbeat(context.Background(), Heartbeat{NodeID: 2, Epoch: epoch - 1, MetadataOffset: epoch}); !errors.Is(err, ErrStaleBrokerEpoch) {
		t.Fatalf("stale epoch: %v", err)
	}
	if _, err := sc.c.BrokerHeartbeat(context.Background(), Heartbeat{NodeID: 9, Epoch: 1}); !errors.Is(err, ErrBrokerNotRegistered) {
		t.Fatalf("unknown broker: %v", err)
	}
	r, err = sc.c.BrokerHeartbeat(context.Background(), Heartbeat{NodeID: 2, Epoch: epoch, MetadataOffset: epoch})
	if err != nil || !r.CaughtUp || r.Fenced {
		t.Fatalf("caught up: %+v, %v; want unfenced", r, err)
	}
}

func TestSessionExpiryFencesAndMovesLeadership(t *testing.T) {
	sc := newSessionCluster(t, 3)
	mustCreate(t, sc.c, CreateTopic{Name: "rf3", NumPartitions: 6, ReplicationFactor: 3},
		CreateTopic{Name: "rf1", Assignments: map[int32][]int32{0: {1}}, NumPartitions: -1, ReplicationFactor: -1})
	before, _ := sc.c.Image().Topic("rf3")

	// Brokers 2 and 3 keep heartbeating; broker 1 falls silent.
	sc.clock.Advance(testSession / 2)
	sc.heartbeat(2, false)
	sc.heartbeat(3, false)
	if err := sc.c.ExpireSessions(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sc.c.Image().Brokers[1].Fenced {
		t.Fatal("broker 1 fenced before its session expired")
	}
	sc.clock.Advance(testSession/2 + time.Millisecond)
	sc.heartbeat(2, false)
	sc.heartbeat(3, false)
	if err := sc.c.ExpireSessions(context.Background()); err != nil {
		t.Fatal(err)
	}
	im := sc.c.Image()
	if !im.Brokers[1].Fenced || im.Brokers[2].Fenced || im.Brokers[3].Fenced {
		t.Fatalf("fenced: 1=%v 2=%v 3=%v, want only 1", im.Brokers[1].Fenced, im.Brokers[2].Fenced, im.Brokers[3].Fenced)
	}
	for i, p := range im.Topics["rf3"].Partitions {
		old := before.Partitions[i]
		if p.Leader == 1 || slices.Contains(p.ISR, 1) || len(p.ISR) != 2 {
			t.Errorf("rf3-%d: leader %d ISR %v; broker 1 should be gone", i, p.Leader, p.ISR)
		}
		wantLE := old.LeaderEpoch
		if old.Leader == 1 {
			wantLE++
		}
		if p.LeaderEpoch != wantLE || p.PartitionEpoch != old.PartitionEpoch+1 {
			t.Errorf("rf3-%d: leader epoch %d partition epoch %d, want %d and %d", i, p.LeaderEpoch, p.PartitionEpoch, wantLE, old.PartitionEpoch+1)
		}
	}
	// With eligible leader replicas on (the default), the ISR empties and
	// its last member stays eligible, with itself as last known leader.
	if p := im.Topics["rf1"].Partitions[0]; p.Leader != -1 || len(p.ISR) != 0 || !slices.Equal(p.ELR, []int32{1}) ||
		!slices.Equal(p.LastKnownELR, []int32{1}) || p.LeaderEpoch != 1 {
		t.Errorf("rf1-0 after losing its only replica: %+v, want leaderless with ISR [], ELR [1] at leader epoch 1", p)
	}
	if !im.Offline(&im.Topics["rf1"].Partitions[0]) {
		t.Error("rf1-0 is not offline")
	}

	// Broker 1 returns: unfenced, and re-elected where it is the only ISR
	// member; elsewhere the ISR grows only when its leader says so.
	sc.heartbeat(1, false)
	im = sc.c.Image()
	if im.Brokers[1].Fenced {
		t.Fatal("broker 1 still fenced after heartbeating again")
	}
	if p := im.Topics["rf1"].Partitions[0]; p.Leader != 1 || p.LeaderEpoch != 2 {
		t.Errorf("rf1-0 after broker 1 returned: %+v, want led by 1 at leader epoch 2", p)
	}
}

// Two sessions expiring in one pass: the second broker's partition changes
// are planned on top of the first's, so both leave every ISR and no change
// is refused for a stale partition epoch.
func TestTwoSessionsExpireTogether(t *testing.T) {
	sc := newSessionCluster(t, 4)
	mustCreate(t, sc.c, CreateTopic{Name: "rf3", NumPartitions: 8, ReplicationFactor: 3})
	sc.clock.Advance(testSession + time.Millisecond)
	sc.heartbeat(3, false)
	sc.heartbeat(4, false)
	if err := sc.c.ExpireSessions(context.Background()); err != nil {
		t.Fatal(err)
	}
	im := sc.c.Image()
	if !im.Brokers[1].Fenced || !im.Brokers[2].Fenced {
		t.Fatalf("fenced: 1=%v 2=%v, want both", im.Brokers[1].Fenced, im.Brokers[2].Fenced)
	}
	for i, p := range im.Topics["rf3"].Partitions {
		for _, gone := range []int32{1, 2} {
			if p.Leader == gone || slices.Contains(p.ISR, gone) {
				t.Errorf("rf3-%d: leader %d ISR %v still holds broker %d", i, p.Leader, p.ISR, gone)
			}
		}
		if p.Leader < 0 && (slices.Contains(p.Replicas, 3) || slices.Contains(p.Replicas, 4)) && len(p.ISR) > 0 {
			t.Errorf("rf3-%d: leaderless with ISR %v", i, p.ISR)
		}
	}
}

func TestControlledShutdownMovesLeadership(t *testing.T) {
	sc := newSessionCluster(t, 3)
	mustCreate(t, sc.c, CreateTopic{Name: "t", NumPartitions: 3, ReplicationFactor: 3})
	if sc.c.Image().leaderships(2) == 0 {
		t.Fatal("broker 2 leads nothing; the placement does not spread leaders")
	}
	r := sc.heartbeat(2, true)
	if !r.ShouldShutdown || !r.Fenced {
		t.Fatalf("reply %+v, want should-shutdown and fenced", r)
	}
	im := sc.c.Image()
	if n := im.leaderships(2); n != 0 {
		t.Fatalf("broker 2 still leads %d partitions", n)
	}
	for _, p := range im.Topics["t"].Partitions {
		if slices.Contains(p.ISR, 2) || p.Leader < 0 {
			t.Errorf("partition %d: leader %d ISR %v", p.Index, p.Leader, p.ISR)
		}
	}
	// A shut-down broker is fenced; a second request is answered at once,
	// and a late ordinary heartbeat does not unfence it.
	if r := sc.heartbeat(2, true); !r.ShouldShutdown {
		t.Fatalf("repeated shutdown heartbeat: %+v", r)
	}
	if r := sc.heartbeat(2, false); !r.Fenced || !sc.c.Image().Brokers[2].Fenced {
		t.Fatalf("a late heartbeat after the shutdown: %+v", r)
	}
}

func TestRestartedLeaderLosesLeadershipUntilUnfenced(t *testing.T) {
	sc := newSessionCluster(t, 2)
	mustCreate(t, sc.c, CreateTopic{Name: "t", Assignments: map[int32][]int32{0: {1, 2}}, NumPartitions: -1, ReplicationFactor: -1},
		CreateTopic{Name: "u", Assignments: map[int32][]int32{0: {1}}, NumPartitions: -1, ReplicationFactor: -1})
	// Broker 1 restarts without a controlled shutdown: its new registration
	// withdraws its leaderships so that it never leads under an old epoch.
	epoch, err := sc.c.RegisterBrokerFenced(context.Background(), Broker{NodeID: 1, Host: "localhost", Port: 9091})
	if err != nil {
		t.Fatal(err)
	}
	sc.epoch[1] = epoch
	im := sc.c.Image()
	if p := im.Topics["t"].Partitions[0]; p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) || p.LeaderEpoch != 1 {
		t.Errorf("t-0: %+v, want led by 2 alone at leader epoch 1", p)
	}
	if p := im.Topics["u"].Partitions[0]; p.Leader != -1 {
		t.Errorf("u-0: %+v, want leaderless", p)
	}
	sc.heartbeat(1, false)
	if p := sc.partition("u", 0); p.Leader != 1 || p.LeaderEpoch != 2 {
		t.Errorf("u-0 after the unfence: %+v, want led by 1 at leader epoch 2", p)
	}
}

func TestAlterPartition(t *testing.T) {
	sc := newSessionCluster(t, 4)
	mustCreate(t, sc.c, CreateTopic{Name: "t", Assignments: map[int32][]int32{0: {1, 2, 3}}, NumPartitions: -1, ReplicationFactor: -1})
	sc.heartbeat(4, true) // broker 4 shuts down: fenced
	base := AlterPartitionRequest{BrokerID: 1, BrokerEpoch: sc.epoch[1], Topic: "t", Partition: 0, LeaderEpoch: 0, PartitionEpoch: 0}
	with := func(f func(*AlterPartitionRequest)) AlterPartitionRequest {
		r := base
		f(&r)
		return r
	}
	for _, tc := range []struct {
		name string
		req  AlterPartitionRequest
		want error
	}{
		{"unknown topic", with(func(r *AlterPartitionRequest) { r.Topic, r.ISR = "nope", []int32{1} }), ErrUnknownTopic},
		{"unknown partition", with(func(r *AlterPartitionRequest) { r.Partition, r.ISR = 3, []int32{1} }), ErrUnknownTopic},
		{"stale broker epoch", with(func(r *AlterPartitionRequest) { r.BrokerEpoch, r.ISR = 1, []int32{1} }), ErrStaleBrokerEpoch},
		{"old leader epoch", with(func(r *AlterPartitionRequest) { r.LeaderEpoch, r.ISR = -1, []int32{1} }), ErrFencedLeaderEpoch},
		{"newer leader epoch", with(func(r *AlterPartitionRequest) { r.LeaderEpoch, r.ISR = 5, []int32{1} }), ErrNotController},
		{"not the leader", with(func(r *AlterPartitionRequest) { r.BrokerID, r.BrokerEpoch, r.ISR = 2, -1, []int32{2} }), ErrInvalidRequest},
		{"old partition epoch", with(func(r *AlterPartitionRequest) { r.PartitionEpoch, r.ISR = -1, []int32{1} }), ErrInvalidUpdateVersion},
		{"ISR without leader", with(func(r *AlterPartitionRequest) { r.ISR = []int32{2, 3} }), ErrInvalidRequest},
		{"ISR member not a replica", with(func(r *AlterPartitionRequest) { r.ISR = []int32{1, 4} }), ErrInvalidRequest},
		{"ISR member twice", with(func(r *AlterPartitionRequest) { r.ISR = []int32{1, 1} }), ErrInvalidRequest},
		{"shrink", with(func(r *AlterPartitionRequest) { r.ISR = []int32{1, 3} }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sc.c.alterPartition(context.Background(), tc.req)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if err == nil && (!slices.Equal(p.ISR, []int32{1, 3}) || p.PartitionEpoch != 1 || p.LeaderEpoch != 0) {
				t.Fatalf("after the shrink: %+v, want ISR [1 3] at partition epoch 1, leader epoch 0", p)
			}
		})
	}
	// The same request again is now stale.
	if _, err := sc.c.AlterPartition(context.Background(), "t", 0, 0, 0, []int32{1, 2, 3}); !errors.Is(err, ErrInvalidUpdateVersion) {
		t.Fatalf("replayed request: %v", err)
	}
	// Expanding to a fenced broker is refused; to a live one it is fine.
	mustCreate(t, sc.c, CreateTopic{Name: "u", Assignments: map[int32][]int32{0: {1, 4}}, NumPartitions: -1, ReplicationFactor: -1})
	if p := sc.partition("u", 0); !slices.Equal(p.ISR, []int32{1}) {
		t.Fatalf("new partition with a fenced replica: ISR %v, want [1]", p.ISR)
	}
	if _, err := sc.c.AlterPartition(context.Background(), "u", 0, 0, 0, []int32{1, 4}); !errors.Is(err, ErrIneligibleReplica) {
		t.Fatalf("expanding to a fenced broker: %v", err)
	}
	p, err := sc.c.AlterPartition(context.Background(), "t", 0, 0, 1, []int32{1, 2, 3})
	if err != nil || !slices.Equal(p.ISR, []int32{1, 2, 3}) || p.PartitionEpoch != 2 {
		t.Fatalf("expand: %+v, %v", p, err)
	}
}

func TestElectLeaders(t *testing.T) {
	sc := newSessionCluster(t, 3)
	mustCreate(t, sc.c, CreateTopic{Name: "t", Assignments: map[int32][]int32{0: {1, 2}, 1: {2, 3}}, NumPartitions: -1, ReplicationFactor: -1},
		CreateTopic{Name: "s", Assignments: map[int32][]int32{0: {3}}, NumPartitions: -1, ReplicationFactor: -1})
	ctx := context.Background()
	// Move t-0's leadership to 2 by shrinking, then back by preferred election.
	sc.heartbeat(1, true)
	sc.epoch[1], _ = sc.c.RegisterBrokerFenced(ctx, Broker{NodeID: 1, Host: "localhost", Port: 9091})
	sc.heartbeat(1, false)
	if p := sc.partition("t", 0); p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) {
		t.Fatalf("t-0 after broker 1 restarted: %+v", p)
	}
	res, err := sc.c.ElectLeaders(ctx, ElectPreferred, []TopicPartition{{"t", 0}, {"t", 1}, {"nope", 0}})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[0].Err, ErrPreferredLeaderNotAvailable) || !errors.Is(res[1].Err, ErrElectionNotNeeded) || !errors.Is(res[2].Err, ErrUnknownTopic) {
		t.Fatalf("results %+v", res)
	}
	// The leader puts 1 back in the ISR; now the preferred election moves it.
	if _, err := sc.c.AlterPartition(ctx, "t", 0, 0, 0, []int32{1}); err == nil {
		t.Fatal("a non-leader changed the ISR")
	}
	p := sc.partition("t", 0)
	if _, err := sc.c.alterPartition(ctx, AlterPartitionRequest{BrokerID: 2, BrokerEpoch: -1, Topic: "t", LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: []int32{2, 1}}); err != nil {
		t.Fatal(err)
	}
	res, err = sc.c.ElectLeaders(ctx, ElectPreferred, nil)
	if err != nil || len(res) != 1 || res[0].TopicPartition != (TopicPartition{"t", 0}) || res[0].Err != nil {
		t.Fatalf("preferred election over all partitions: %+v, %v", res, err)
	}
	if p := sc.partition("t", 0); p.Leader != 1 {
		t.Fatalf("t-0 leader %d, want 1", p.Leader)
	}

	// An unclean election is not needed while the leader lives, and
	// impossible once the only replica is gone.
	res, _ = sc.c.ElectLeaders(ctx, ElectUnclean, []TopicPartition{{"s", 0}})
	if !errors.Is(res[0].Err, ErrElectionNotNeeded) {
		t.Fatalf("unclean election of a led partition: %v", res[0].Err)
	}
	sc.heartbeat(3, true) // 3 leaves: s-0 leaderless
	res, _ = sc.c.ElectLeaders(ctx, ElectUnclean, []TopicPartition{{"s", 0}})
	if !errors.Is(res[0].Err, ErrEligibleLeadersNotAvailable) {
		t.Fatalf("unclean election without a live replica: %v", res[0].Err)
	}
	if _, err := sc.c.ElectLeaders(ctx, 7, nil); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("bad election type: %v", err)
	}
}

func TestUncleanElectionOutsideISR(t *testing.T) {
	sc := newSessionCluster(t, 2)
	ctx := context.Background()
	mustCreate(t, sc.c, CreateTopic{Name: "t", Assignments: map[int32][]int32{0: {1, 2}}, NumPartitions: -1, ReplicationFactor: -1,
		Configs: map[string]string{"unclean.leader.election.enable": "true"}})
	// The leader drops 2 from the ISR, then dies: 2 may lead, uncleanly.
	if _, err := sc.c.AlterPartition(ctx, "t", 0, 0, 0, []int32{1}); err != nil {
		t.Fatal(err)
	}
	sc.clock.Advance(testSession + time.Second)
	sc.heartbeat(2, false)
	if err := sc.c.ExpireSessions(ctx); err != nil {
		t.Fatal(err)
	}
	if p := sc.partition("t", 0); p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) {
		t.Fatalf("after the unclean election: %+v, want led by 2 with ISR [2]", p)
	}
}

func TestReassignments(t *testing.T) {
	sc := newSessionCluster(t, 4)
	ctx := context.Background()
	mustCreate(t, sc.c, CreateTopic{Name: "t", Assignments: map[int32][]int32{0: {1, 2, 3}, 1: {1, 2, 3}}, NumPartitions: -1, ReplicationFactor: -1})

	errs := sc.c.AlterPartitionReassignments(ctx, []Reassignment{
		{Topic: "t", Partition: 0, Replicas: []int32{2, 3}},    // only removes: completes at once
		{Topic: "t", Partition: 1, Replicas: []int32{4, 2, 3}}, // adds 4: waits for it
		{Topic: "t", Partition: 2, Replicas: []int32{1}},
		{Topic: "t", Partition: 0, Replicas: []int32{1}},
	})
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], ErrUnknownTopic) || !errors.Is(errs[3], ErrInvalidRequest) {
		t.Fatalf("errs %v", errs)
	}
	if p := sc.partition("t", 0); !slices.Equal(p.Replicas, []int32{2, 3}) || p.Leader != 2 || p.Reassigning() || p.LeaderEpoch != 1 {
		t.Fatalf("t-0: %+v, want replicas [2 3] led by 2 at leader epoch 1", p)
	}
	p := sc.partition("t", 1)
	if !slices.Equal(p.Replicas, []int32{4, 2, 3, 1}) || !slices.Equal(p.AddingReplicas, []int32{4}) || !slices.Equal(p.RemovingReplicas, []int32{1}) || p.Leader != 1 {
		t.Fatalf("t-1 during the reassignment: %+v", p)
	}
	if got := sc.c.ListPartitionReassignments(nil); len(got) != 1 || got[0].Partition != 1 {
		t.Fatalf("listed %+v", got)
	}
	if got := sc.c.ListPartitionReassignments(map[string][]int32{"t": {0}}); len(got) != 0 {
		t.Fatalf("listed %+v for t-0", got)
	}
	// The leader reports 4 caught up: the reassignment completes and the
	// leadership leaves broker 1.
	if _, err := sc.c.AlterPartition(ctx, "t", 1, p.LeaderEpoch, p.PartitionEpoch, []int32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if p := sc.partition("t", 1); !slices.Equal(p.Replicas, []int32{4, 2, 3}) || p.Reassigning() || p.Leader != 4 || slices.Contains(p.ISR, 1) {
		t.Fatalf("t-1 after the catch-up: %+v", p)
	}
	// A cancelled reassignment reverts.
	if errs := sc.c.AlterPartitionReassignments(ctx, []Reassignment{{Topic: "t", Partition: 0, Replicas: []int32{2, 3, 1}}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if errs := sc.c.AlterPartitionReassignments(ctx, []Reassignment{{Topic: "t", Partition: 0}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if p := sc.partition("t", 0); !slices.Equal(p.Replicas, []int32{2, 3}) || p.Reassigning() {
		t.Fatalf("t-0 after the cancel: %+v", p)
	}
	if errs := sc.c.AlterPartitionReassignments(ctx, []Reassignment{{Topic: "t", Partition: 0}}); !errors.Is(errs[0], ErrNoReassignmentInProgress) {
		t.Fatalf("cancel without a reassignment: %v", errs[0])
	}
	if errs := sc.c.AlterPartitionReassignments(ctx, []Reassignment{{Topic: "t", Partition: 0, Replicas: []int32{2, 9}}}); !errors.Is(errs[0], ErrInvalidReplicaAssignment) {
		t.Fatalf("target with an unknown broker: %v", errs[0])
	}
}

func TestRackAwarePlacement(t *testing.T) {
	sc := newSessionCluster(t, 6, "a", "b", "c")
	mustCreate(t, sc.c, CreateTopic{Name: "t", NumPartitions: 12, ReplicationFactor: 3})
	im := sc.c.Image()
	leaders := map[int32]int{}
	for _, p := range im.Topics["t"].Partitions {
		racks := map[string]bool{}
		for _, id := range p.Replicas {
			racks[im.Brokers[id].Rack] = true
		}
		if len(racks) != 3 || dupOf(p.Replicas) >= 0 {
			t.Errorf("partition %d replicas %v span racks %v", p.Index, p.Replicas, racks)
		}
		leaders[p.Leader]++
	}
	for id := int32(1); id <= 6; id++ {
		if leaders[id] != 2 {
			t.Errorf("broker %d leads %d partitions, want 2 (%v)", id, leaders[id], leaders)
		}
	}
	// Fenced brokers get no new replicas.
	sc.heartbeat(6, true)
	mustCreate(t, sc.c, CreateTopic{Name: "u", NumPartitions: 10, ReplicationFactor: 3})
	for _, p := range sc.c.Image().Topics["u"].Partitions {
		if slices.Contains(p.Replicas, 6) {
			t.Errorf("u-%d placed on fenced broker 6: %v", p.Index, p.Replicas)
		}
	}
}

func TestPartitionChangeRecordChecks(t *testing.T) {
	sc := newSessionCluster(t, 2)
	mustCreate(t, sc.c, CreateTopic{Name: "t", Assignments: map[int32][]int32{0: {1, 2}}, NumPartitions: -1, ReplicationFactor: -1})
	tp, _ := sc.c.Image().Topic("t")
	for _, tc := range []struct {
		name string
		r    *partitionChangeRecord
		want error
	}{
		{"stale epoch", &partitionChangeRecord{TopicID: tp.ID, PartitionEpoch: 3, Leader: 1, ISR: []int32{1}, Replicas: []int32{1, 2}}, ErrInvalidUpdateVersion},
		{"leader outside ISR", &partitionChangeRecord{TopicID: tp.ID, Leader: 2, ISR: []int32{1}, Replicas: []int32{1, 2}}, ErrInvalidRequest},
		{"ISR outside replicas", &partitionChangeRecord{TopicID: tp.ID, Leader: 1, ISR: []int32{1, 3}, Replicas: []int32{1, 2}}, ErrInvalidRequest},
		{"no replicas", &partitionChangeRecord{TopicID: tp.ID, Leader: -1}, ErrInvalidRequest},
		{"unknown partition", &partitionChangeRecord{TopicID: tp.ID, Partition: 1, Leader: 1, ISR: []int32{1}, Replicas: []int32{1}}, ErrUnknownTopic},
		{"applies", &partitionChangeRecord{TopicID: tp.ID, Leader: 2, ISR: []int32{2}, Replicas: []int32{1, 2}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc.c.writeMu.Lock()
			err := sc.c.propose(context.Background(), tc.r)
			sc.c.writeMu.Unlock()
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if p := sc.partition("t", 0); p.Leader != 2 || p.LeaderEpoch != 1 || p.PartitionEpoch != 1 {
		t.Fatalf("after the change: %+v", p)
	}
}
