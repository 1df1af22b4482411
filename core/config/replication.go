package config

// Replication is the [replication] section: how followers fetch from
// leaders and when a lagging follower leaves the ISR. The keys are Kafka's
// broker settings with '_' for '.'.
type Replication struct {
	// ReplicaLagTimeMaxMs is how long an ISR member may go without having
	// caught up with the leader before the leader removes it from the ISR
	// (replica.lag.time.max.ms).
	ReplicaLagTimeMaxMs int64 `toml:"replica_lag_time_max_ms"`
	// ReplicaFetchMaxBytes is the most a follower asks for per partition in
	// one fetch; a larger first batch is still returned
	// (replica.fetch.max.bytes).
	ReplicaFetchMaxBytes int32 `toml:"replica_fetch_max_bytes"`
	// ReplicaFetchResponseMaxBytes bounds a whole follower fetch response
	// (replica.fetch.response.max.bytes).
	ReplicaFetchResponseMaxBytes int32 `toml:"replica_fetch_response_max_bytes"`
	// ReplicaFetchMinBytes is how much a follower fetch waits for
	// (replica.fetch.min.bytes).
	ReplicaFetchMinBytes int32 `toml:"replica_fetch_min_bytes"`
	// ReplicaFetchWaitMaxMs is the longest a follower fetch waits on the
	// leader for ReplicaFetchMinBytes (replica.fetch.wait.max.ms); it must
	// not exceed ReplicaLagTimeMaxMs, or an idle follower would leave the
	// ISR.
	ReplicaFetchWaitMaxMs int64 `toml:"replica_fetch_wait_max_ms"`
	// ReplicaFetchBackoffMs is the pause after a failed follower fetch
	// (replica.fetch.backoff.ms).
	ReplicaFetchBackoffMs int64 `toml:"replica_fetch_backoff_ms"`
	// ReplicaHighWatermarkCheckpointIntervalMs is how often every
	// partition's high watermark is written to the data dir's
	// replication-offset-checkpoint (replica.high.watermark.checkpoint.interval.ms);
	// it is also written at shutdown.
	ReplicaHighWatermarkCheckpointIntervalMs int64 `toml:"replica_high_watermark_checkpoint_interval_ms"`
	// EligibleLeaderReplicasVersion is the eligible.leader.replicas.version
	// feature level (KIP-966): 1, Kafka 4.4's level for a new cluster and
	// the default, keeps the caught-up replicas that leave an ISR below
	// min.insync.replicas as eligible leaders (the partition leader
	// advances the high watermark only while the ISR holds
	// min.insync.replicas, so they have every record a consumer read); 0
	// turns that off. Every node of a cluster must set the same level.
	EligibleLeaderReplicasVersion int16 `toml:"eligible_leader_replicas_version"`
}

// maxReplicaFetchBytes bounds the fetch sizes: a follower holds a whole
// response in memory.
const maxReplicaFetchBytes = 1 << 30

func defaultReplication() Replication {
	return Replication{
		ReplicaLagTimeMaxMs:                      30000,
		ReplicaFetchMaxBytes:                     1 << 20,
		ReplicaFetchResponseMaxBytes:             10 << 20,
		ReplicaFetchMinBytes:                     1,
		ReplicaFetchWaitMaxMs:                    500,
		ReplicaFetchBackoffMs:                    1000,
		ReplicaHighWatermarkCheckpointIntervalMs: 5000,
		EligibleLeaderReplicasVersion:            1,
	}
}

func (r *Replication) validate(bad func(key, format string, args ...any) error) error {
	switch {
	case r.ReplicaLagTimeMaxMs < 1:
		return bad("replication.replica_lag_time_max_ms", "%d is below 1", r.ReplicaLagTimeMaxMs)
	case r.ReplicaFetchMaxBytes < 1 || r.ReplicaFetchMaxBytes > maxReplicaFetchBytes:
		return bad("replication.replica_fetch_max_bytes", "%d is not in [1, %d]", r.ReplicaFetchMaxBytes, maxReplicaFetchBytes)
	case r.ReplicaFetchResponseMaxBytes < 1 || r.ReplicaFetchResponseMaxBytes > maxReplicaFetchBytes:
		return bad("replication.replica_fetch_response_max_bytes", "%d is not in [1, %d]",
			r.ReplicaFetchResponseMaxBytes, maxReplicaFetchBytes)
	case r.ReplicaFetchMinBytes < 1:
		return bad("replication.replica_fetch_min_bytes", "%d is below 1", r.ReplicaFetchMinBytes)
	case r.ReplicaFetchWaitMaxMs < 1:
		return bad("replication.replica_fetch_wait_max_ms", "%d is below 1", r.ReplicaFetchWaitMaxMs)
	case r.ReplicaFetchWaitMaxMs > r.ReplicaLagTimeMaxMs:
		return bad("replication.replica_fetch_wait_max_ms", "%d is above replica_lag_time_max_ms %d",
			r.ReplicaFetchWaitMaxMs, r.ReplicaLagTimeMaxMs)
	case r.ReplicaFetchBackoffMs < 1:
		return bad("replication.replica_fetch_backoff_ms", "%d is below 1", r.ReplicaFetchBackoffMs)
	case r.ReplicaHighWatermarkCheckpointIntervalMs < 1:
		return bad("replication.replica_high_watermark_checkpoint_interval_ms", "%d is below 1",
			r.ReplicaHighWatermarkCheckpointIntervalMs)
	case r.EligibleLeaderReplicasVersion < 0 || r.EligibleLeaderReplicasVersion > 1:
		return bad("replication.eligible_leader_replicas_version", "%d is not 0 or 1", r.EligibleLeaderReplicasVersion)
	}
	return nil
}
