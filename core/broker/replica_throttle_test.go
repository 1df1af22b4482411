package broker

import (
	"io"
	"log/slog"
	"testing"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/controller"
	"github.com/gregorbroker/gregor/core/replication"
)

// TestApplyReplicationThrottle: broker 2 takes its rates from its own
// dynamic configs, then the cluster-wide ones, then none; and its throttled
// replicas from the topics' lists, keeping only its own entries.
func TestApplyReplicationThrottle(t *testing.T) {
	broker := func(name string) controller.ConfigResource {
		return controller.ConfigResource{Type: controller.ResourceBroker, Name: name}
	}
	topic := func(name string) controller.ConfigResource {
		return controller.ConfigResource{Type: controller.ResourceTopic, Name: name}
	}
	type tp struct {
		topic     string
		partition int32
	}
	tests := []struct {
		name                   string
		configs                map[controller.ConfigResource]map[string]string
		leaderRate, followRate int64
		leaderOn, followerOn   []tp
		leaderOff, followerOff []tp
	}{
		{name: "nothing set", leaderRate: replication.Unthrottled, followRate: replication.Unthrottled,
			leaderOff: []tp{{"a", 0}}, followerOff: []tp{{"a", 0}}},
		{name: "own value over the cluster-wide one",
			configs: map[controller.ConfigResource]map[string]string{
				broker("2"): {config.LeaderReplicationThrottledRate: "1000"},
				broker(""):  {config.LeaderReplicationThrottledRate: "5", config.FollowerReplicationThrottledRate: "2000"},
				broker("3"): {config.FollowerReplicationThrottledRate: "7"},
			},
			leaderRate: 1000, followRate: 2000},
		{name: "throttled replicas of this broker only",
			configs: map[controller.ConfigResource]map[string]string{
				topic("a"): {config.LeaderReplicationThrottledReplicas: "0:1,1:2,2:2", config.FollowerReplicationThrottledReplicas: "0:3"},
				topic("b"): {config.FollowerReplicationThrottledReplicas: "*"},
				topic("c"): {"retention.ms": "1"},
			},
			leaderRate: replication.Unthrottled, followRate: replication.Unthrottled,
			leaderOn: []tp{{"a", 1}, {"a", 2}}, leaderOff: []tp{{"a", 0}, {"b", 0}, {"c", 0}},
			followerOn: []tp{{"b", 0}, {"b", 9}}, followerOff: []tp{{"a", 0}, {"a", 1}, {"c", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th, err := replication.NewThrottle(replication.DefaultQuotaConfig(), nil)
			if err != nil {
				t.Fatal(err)
			}
			b := &Broker{Config: config.Default(), Throttle: th, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			b.Config.NodeID = 2
			im := &controller.Image{Configs: tt.configs}
			b.applyReplicationThrottle(im)
			if got := th.Leader.Limit(); got != tt.leaderRate {
				t.Errorf("leader rate %d, want %d", got, tt.leaderRate)
			}
			if got := th.Follower.Limit(); got != tt.followRate {
				t.Errorf("follower rate %d, want %d", got, tt.followRate)
			}
			for q, sets := range map[*replication.Quota][2][]tp{th.Leader: {tt.leaderOn, tt.leaderOff}, th.Follower: {tt.followerOn, tt.followerOff}} {
				side := "leader"
				if q == th.Follower {
					side = "follower"
				}
				for i, want := range []bool{true, false} {
					for _, p := range sets[i] {
						if got := q.IsThrottled(p.topic, p.partition); got != want {
							t.Errorf("%s side: %s-%d throttled %v, want %v", side, p.topic, p.partition, got, want)
						}
					}
				}
			}
		})
	}
}
