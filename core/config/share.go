package config

// validateShareGroups checks the share group settings with Apache Kafka's
// ranges (ShareGroupConfig and GroupCoordinatorConfig) and that each
// default lies within its own min/max.
func validateShareGroups(g Groups, bad func(key, format string, args ...any) error) error {
	type rng struct {
		key       string
		v, lo, hi int64
	}
	for _, r := range []rng{
		{"group_consumer_min_session_timeout_ms", g.GroupConsumerMinSessionTimeoutMs, 1, 1<<31 - 1},
		{"group_consumer_max_session_timeout_ms", g.GroupConsumerMaxSessionTimeoutMs, g.GroupConsumerMinSessionTimeoutMs, 1<<31 - 1},
		{"group_consumer_min_heartbeat_interval_ms", g.GroupConsumerMinHeartbeatIntervalMs, 1, 1<<31 - 1},
		{"group_consumer_max_heartbeat_interval_ms", g.GroupConsumerMaxHeartbeatIntervalMs, g.GroupConsumerMinHeartbeatIntervalMs, 1<<31 - 1},
		{"group_share_min_session_timeout_ms", g.GroupShareMinSessionTimeoutMs, 1, 1<<31 - 1},
		{"group_share_max_session_timeout_ms", g.GroupShareMaxSessionTimeoutMs, g.GroupShareMinSessionTimeoutMs, 1<<31 - 1},
		{"group_share_session_timeout_ms", g.GroupShareSessionTimeoutMs, g.GroupShareMinSessionTimeoutMs, g.GroupShareMaxSessionTimeoutMs},
		{"group_share_min_heartbeat_interval_ms", g.GroupShareMinHeartbeatIntervalMs, 1, 1<<31 - 1},
		{"group_share_max_heartbeat_interval_ms", g.GroupShareMaxHeartbeatIntervalMs, g.GroupShareMinHeartbeatIntervalMs, 1<<31 - 1},
		{"group_share_heartbeat_interval_ms", g.GroupShareHeartbeatIntervalMs, g.GroupShareMinHeartbeatIntervalMs, g.GroupShareMaxHeartbeatIntervalMs},
		{"group_share_max_size", int64(g.GroupShareMaxSize), 1, 1000},
		{"group_share_min_record_lock_duration_ms", g.GroupShareMinRecordLockDurationMs, 1000, 30000},
		{"group_share_max_record_lock_duration_ms", g.GroupShareMaxRecordLockDurationMs, 30000, 3600000},
		{"group_share_record_lock_duration_ms", g.GroupShareRecordLockDurationMs, g.GroupShareMinRecordLockDurationMs, g.GroupShareMaxRecordLockDurationMs},
		{"group_share_min_delivery_count_limit", int64(g.GroupShareMinDeliveryCountLimit), 2, 5},
		{"group_share_max_delivery_count_limit", int64(g.GroupShareMaxDeliveryCountLimit), 5, 25},
		{"group_share_delivery_count_limit", int64(g.GroupShareDeliveryCountLimit), int64(g.GroupShareMinDeliveryCountLimit), int64(g.GroupShareMaxDeliveryCountLimit)},
		{"group_share_partition_max_record_locks", int64(g.GroupSharePartitionMaxRecordLocks), 100, 10000},
		{"group_share_max_share_sessions", int64(g.GroupShareMaxShareSessions), int64(g.GroupShareMaxSize), 1<<31 - 1},
		{"share_coordinator_snapshot_update_records_per_snapshot", int64(g.ShareCoordinatorSnapshotUpdateRecordsPerSnapshot), 0, 500},
	} {
		if r.v < r.lo || r.v > r.hi {
			return bad("groups."+r.key, "%d is not in [%d, %d]", r.v, r.lo, r.hi)
		}
	}
	if g.GroupShareHeartbeatIntervalMs >= g.GroupShareSessionTimeoutMs {
		return bad("groups.group_share_heartbeat_interval_ms", "%d must be below group_share_session_timeout_ms %d",
			g.GroupShareHeartbeatIntervalMs, g.GroupShareSessionTimeoutMs)
	}
	return nil
}
