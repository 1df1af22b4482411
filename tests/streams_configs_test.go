package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The group-level streams.* configs, set with IncrementalAlterConfigs on
// the GROUP resource, are what the streams coordinator runs the group
// with: the heartbeat interval its members are told and the standby
// replicas of its tasks. Values outside the broker's bounds are refused.
func TestStreamsGroupConfigsHonoured(t *testing.T) {
	b := startBroker(t, groupConfig)
	const group = "wc-app"
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.MaxVersions(kversion.V4_4_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	vals, srcs := groupConfigsOf(t, cl, group)
	for name, want := range map[string]string{"streams.session.timeout.ms": "45000",
		"streams.heartbeat.interval.ms": "5000", "streams.num.standby.replicas": "0"} {
		if vals[name] != want || srcs[name] != kmsg.ConfigSourceDefaultConfig {
			t.Errorf("%s = %q (%v), want %q DEFAULT_CONFIG", name, vals[name], srcs[name], want)
		}
	}
	set := func(v string) *string { return &v }
	for _, bad := range []struct{ name, value string }{
		{"streams.num.standby.replicas", "3"},   // above group.streams.max.standby.replicas
		{"streams.session.timeout.ms", "44999"}, // below group.streams.min.session.timeout.ms
		{"streams.heartbeat.interval.ms", "15001"},
	} {
		if err := alterGroupConfig(t, cl, group, bad.name, set(bad.value)); err != kerr.InvalidConfig {
			t.Errorf("set %s=%s: %v, want INVALID_CONFIG", bad.name, bad.value, err)
		}
	}
	if err := alterGroupConfig(t, cl, group, "streams.heartbeat.interval.ms", set("6000")); err != nil {
		t.Fatal(err)
	}
	if vals, srcs := groupConfigsOf(t, cl, group); vals["streams.heartbeat.interval.ms"] != "6000" ||
		srcs["streams.heartbeat.interval.ms"] != kmsg.ConfigSourceGroupConfig {
		t.Fatalf("after alter: %q %v", vals["streams.heartbeat.interval.ms"], srcs["streams.heartbeat.interval.ms"])
	}
	createTopic(t, b.Addr, "wc-input", 4, nil)
	a, bm := streamsPair(t, cl, group)
	r := a.heartbeat(t, cl, group)
	if r.HeartbeatIntervalMillis != 6000 {
		t.Fatalf("heartbeat interval %d, want the group's 6000", r.HeartbeatIntervalMillis)
	}
	epoch := a.epoch
	// One standby replica: the group moves to a new epoch and each member
	// gets the other's 4 tasks as standbys.
	if err := alterGroupConfig(t, cl, group, "streams.num.standby.replicas", set("1")); err != nil {
		t.Fatal(err)
	}
	standby := map[string]int{}
	eventually(t, 30*time.Second, "standby tasks on both members", func() error {
		for _, m := range []*streamsMember{a, bm} {
			r, err := m.tryHeartbeat(t, cl, group)
			if err != nil {
				return err
			}
			if r.StandbyTasks != nil {
				n := 0
				for _, tk := range r.StandbyTasks {
					n += len(tk.Partitions)
				}
				standby[m.id] = n
			}
		}
		if standby[a.id] != 4 || standby[bm.id] != 4 || a.epoch != bm.epoch || a.epoch <= epoch {
			return fmt.Errorf("standby %v, epochs %d %d (was %d)", standby, a.epoch, bm.epoch, epoch)
		}
		return nil
	})
	if len(a.tasks()) != 4 || len(bm.tasks()) != 4 {
		t.Fatalf("active tasks moved: a %v b %v", a.tasks(), bm.tasks())
	}
}
