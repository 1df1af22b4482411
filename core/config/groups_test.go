package config

import (
	"strings"
	"testing"
)

func TestGroupsErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		name, toml, want string
	}{
		{"zero offsets partitions", "[groups]\noffsets_topic_partitions = 0", "groups.offsets_topic_partitions"},
		{"negative initial delay", "[groups]\ngroup_initial_rebalance_delay_ms = -1", "groups.group_initial_rebalance_delay_ms"},
		{"max below min session", "[groups]\ngroup_min_session_timeout_ms = 10000\ngroup_max_session_timeout_ms = 9000", "groups.group_max_session_timeout_ms"},
		{"heartbeat not below session", "[groups]\ngroup_consumer_heartbeat_interval_ms = 45000", "groups.group_consumer_heartbeat_interval_ms"},
		{"unknown assignor", "[groups]\ngroup_consumer_assignors = [\"sticky\"]", "groups.group_consumer_assignors"},
		{"duplicate assignor", "[groups]\ngroup_consumer_assignors = [\"range\", \"range\"]", "groups.group_consumer_assignors"},
		{"no assignor", "[groups]\ngroup_consumer_assignors = []", "groups.group_consumer_assignors"},
		{"streams heartbeat not below session", "[groups]\ngroup_streams_heartbeat_interval_ms = 45000", "groups.group_streams_heartbeat_interval_ms"},
		{"streams standbys above the max", "[groups]\ngroup_streams_num_standby_replicas = 3", "groups.group_streams_num_standby_replicas"},
		{"negative streams standbys", "[groups]\ngroup_streams_num_standby_replicas = -1", "groups.group_streams_num_standby_replicas"},
		{"unknown key", "[groups]\nsession_timeout = 5", "unknown key groups.session_timeout"},
		{"share lock below its min", "[groups]\ngroup_share_record_lock_duration_ms = 14999", "groups.group_share_record_lock_duration_ms"},
		{"share delivery limit above its max", "[groups]\ngroup_share_delivery_count_limit = 11", "groups.group_share_delivery_count_limit"},
		{"share record locks out of Kafka's range", "[groups]\ngroup_share_partition_max_record_locks = 99", "groups.group_share_partition_max_record_locks"},
		{"share sessions below share group size", "[groups]\ngroup_share_max_share_sessions = 199", "groups.group_share_max_share_sessions"},
		{"share heartbeat above its max", "[groups]\ngroup_share_heartbeat_interval_ms = 15001", "groups.group_share_heartbeat_interval_ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.toml)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestGroupsSettingsParse(t *testing.T) {
	cfg, err := Parse("[groups]\noffsets_topic_partitions = 3\ngroup_initial_rebalance_delay_ms = 0\ngroup_consumer_assignors = [\"range\"]")
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.Groups
	if g.OffsetsTopicPartitions != 3 || g.GroupInitialRebalanceDelayMs != 0 || len(g.GroupConsumerAssignors) != 1 ||
		g.GroupConsumerAssignors[0] != "range" || g.GroupMaxSessionTimeoutMs != Default().Groups.GroupMaxSessionTimeoutMs {
		t.Fatalf("groups = %+v", g)
	}
}
