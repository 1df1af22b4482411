package group

import (
	"testing"
	"time"
)

// TestStreamsGroupConfigs: the group-level streams.* configs override the
// coordinator's settings for one group: the heartbeat interval members are
// told, the session after which they are removed, and the standby replicas
// of the target assignment, whose change recomputes it at a new epoch.
func TestStreamsGroupConfigs(t *testing.T) {
	e := sgEnv(t)
	e.topics["app-counts-repartition"] = TopicInfo{ID: [16]byte{2}, Partitions: 4}
	e.topics["app-counts-changelog"] = TopicInfo{ID: [16]byte{3}, Partitions: 4}
	e.groupConfigs["app"] = map[string]string{StreamsHeartbeatIntervalConfig: "7000", StreamsSessionTimeoutConfig: "50000"}
	epochs := map[string]int32{"a": 0, "b": 0}
	e.stabilise(t, epochs, nil)
	r := smust(t, e.shb("a", epochs["a"], nil))
	if r.HeartbeatInterval != 7*time.Second {
		t.Fatalf("heartbeat interval %v, want the group's 7s", r.HeartbeatInterval)
	}
	if r := smust(t, e.c.StreamsHeartbeat(StreamsHeartbeatRequest{Group: "other", MemberID: "x", RebalanceTimeout: time.Second,
		Topology: wordCount(0), ProcessID: ptr("p")})); r.HeartbeatInterval != e.cfg.StreamsHeartbeatInterval {
		t.Fatalf("another group's heartbeat interval %v, want the coordinator's %v", r.HeartbeatInterval, e.cfg.StreamsHeartbeatInterval)
	}
	d, _ := e.c.DescribeStreamsGroup("app")
	for _, m := range d.Members {
		if len(m.Assignment[1]) != 0 {
			t.Fatalf("%s has standby tasks %v without standby replicas", m.MemberID, m.Assignment[1])
		}
	}
	// One standby replica: a new target at the next epoch, each task with
	// a standby on the other process.
	e.groupConfigs["app"][StreamsNumStandbyReplicasConfig] = "1"
	e.stabilise(t, epochs, nil)
	d, _ = e.c.DescribeStreamsGroup("app")
	if d.Epoch != epochs["a"] || d.Epoch <= r.MemberEpoch || d.State != StateStable {
		t.Fatalf("after the standby change: epoch %d (was %d), state %s", d.Epoch, r.MemberEpoch, d.State)
	}
	for _, m := range d.Members {
		if n := len(tasksFromIDs(m.Assignment[1])); n != 4 {
			t.Fatalf("%s has %d standby tasks, want 4", m.MemberID, n)
		}
	}
	// The setting the target was computed with survives a restart: no
	// new epoch after it.
	e.restart()
	ep := d.Epoch
	e.stabilise(t, epochs, nil)
	if d, _ := e.c.DescribeStreamsGroup("app"); d.Epoch != ep {
		t.Fatalf("epoch %d after a restart, want %d", d.Epoch, ep)
	}
	// The group's session timeout: 50s, not the coordinator's 45s.
	e.clock.Advance(46 * time.Second)
	if d, _ := e.c.DescribeStreamsGroup("app"); len(d.Members) != 2 {
		t.Fatalf("%d members 46s after the last heartbeat, want 2 under a 50s session", len(d.Members))
	}
	e.clock.Advance(5 * time.Second)
	if d, _ := e.c.DescribeStreamsGroup("app"); len(d.Members) != 0 {
		t.Fatalf("%d members after the group's session timeout", len(d.Members))
	}
}
