// Package config owns the broker's configuration: the Config struct decoded
// strictly from broker.toml, its defaults and its validation. It knows nothing
// of the subsystems that consume it.
package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Config is the whole of broker.toml.
type Config struct {
	// NodeID is this broker's id in the cluster (Kafka's node.id).
	NodeID int32 `toml:"node_id"`
	// DataDir holds the partition directories, checkpoints and metadata log.
	DataDir string `toml:"data_dir"`
	// ClusterID is used when the data dir is formatted for the first time;
	// empty means a random one.
	ClusterID string `toml:"cluster_id"`
	// Rack is this broker's rack (Kafka's broker.rack); when every broker
	// has one, replica placement puts a partition's replicas in different
	// racks.
	Rack string `toml:"rack"`

	Listeners Listeners `toml:"listeners"`
	// Cluster makes the node part of a multi-node cluster; without voters
	// it is the embedded single-node default.
	Cluster Cluster `toml:"cluster"`
	Log     Log     `toml:"log"`
	// Replication tunes follower fetches, ISR lag and the high watermark
	// checkpoint.
	Replication Replication `toml:"replication"`
	Topics      Topics      `toml:"topics"`
	Limits      Limits      `toml:"limits"`
	Groups      Groups      `toml:"groups"`
	// Transactions configures the transaction coordinator.
	Transactions Transactions `toml:"transactions"`
	Security     Security     `toml:"security"`
	// Telemetry bounds the client metrics pushed with KIP-714.
	Telemetry Telemetry `toml:"telemetry"`
	// Extensions are the WASM modules and plugin processes, by name.
	Extensions map[string]Extension `toml:"extensions"`
	// Mirrors are the mirrors this broker runs ([mirror.NAME]), each
	// holding the keys of a mirror.toml. They are kept as decoded tables:
	// the mirror package decodes them strictly and validates them when the
	// server is built (config does not depend on it).
	Mirrors map[string]MirrorTable `toml:"mirror"`
}

// Listeners are the addresses Gregor binds.
type Listeners struct {
	// Kafka is the Kafka protocol listener.
	Kafka string `toml:"kafka"`
	// KafkaAdvertised is the address clients are told to use; empty means Kafka.
	KafkaAdvertised string `toml:"kafka_advertised"`
	// HTTP serves /metrics, /healthz and the admin API; empty disables it.
	HTTP string `toml:"http"`
	// KafkaProtocol is the Kafka listener's security protocol: PLAINTEXT
	// (default), SSL, SASL_PLAINTEXT or SASL_SSL.
	KafkaProtocol string `toml:"kafka_protocol"`
	// Extra are further Kafka listeners ([[listeners.extra]]).
	Extra []ExtraListener `toml:"extra"`
	// Controller carries Raft and controller traffic between the nodes of
	// a cluster (broker registration, heartbeats, forwarded metadata
	// writes). Required when [cluster] voters is set; unused otherwise.
	Controller string `toml:"controller"`
}

// Log holds the broker-wide log defaults; topic configs override them.
type Log struct {
	SegmentBytes             int64 `toml:"segment_bytes"`
	SegmentMs                int64 `toml:"segment_ms"`
	IndexIntervalBytes       int32 `toml:"index_interval_bytes"`
	RetentionMs              int64 `toml:"retention_ms"`
	RetentionBytes           int64 `toml:"retention_bytes"`
	RetentionCheckIntervalMs int64 `toml:"retention_check_interval_ms"`
	// MaxMessageBytes is the largest record batch a partition accepts
	// (Kafka's message.max.bytes).
	MaxMessageBytes int32 `toml:"max_message_bytes"`
	// MessageTimestampType is CreateTime or LogAppendTime.
	MessageTimestampType string `toml:"message_timestamp_type"`
	// CleanupPolicy is delete, compact or "compact,delete".
	CleanupPolicy string `toml:"cleanup_policy"`
	// MinInsyncReplicas is the default min.insync.replicas.
	MinInsyncReplicas int32 `toml:"min_insync_replicas"`
	// Durability says when an acknowledged write is on disk:
	//   "fsync"      acks=all writes are fsynced (group commit) before the answer
	//                (acks=1 answers after the write reached the page cache);
	//   "page_cache" Kafka's default: no write waits for fsync; the OS flushes.
	Durability string `toml:"durability"`
	// FlushIntervalMs is the default of the topic config flush.ms (Kafka's
	// log.flush.interval.ms): how long written data may stay unflushed; -1
	// leaves it to the OS.
	FlushIntervalMs int64 `toml:"flush_interval_ms"`
	// FlushIntervalMessages is the default of the topic config
	// flush.messages (Kafka's log.flush.interval.messages): an append that
	// leaves this many messages unflushed fsyncs before it is answered; -1
	// leaves it to the OS.
	FlushIntervalMessages int64 `toml:"flush_interval_messages"`
	// FlushSchedulerIntervalMs is how often logs are checked against their
	// flush.ms (Kafka's log.flush.scheduler.interval.ms, whose default of
	// Long.MAX_VALUE would leave flush.ms without effect; Gregor checks each
	// second).
	FlushSchedulerIntervalMs int64 `toml:"flush_scheduler_interval_ms"`
	// FlushOffsetCheckpointIntervalMs is how often every log's recovery
	// point and log start offset are written to the data dir (Kafka's
	// log.flush.offset.checkpoint.interval.ms): recovery after a crash
	// starts from the last written recovery point.
	FlushOffsetCheckpointIntervalMs int64 `toml:"flush_offset_checkpoint_interval_ms"`
	// CleanerBackoffMs is the pause between passes of the log cleaner over
	// compacted topics (Kafka's log.cleaner.backoff.ms).
	CleanerBackoffMs int64 `toml:"cleaner_backoff_ms"`
}

// Topics holds topic defaults.
type Topics struct {
	AutoCreate               bool  `toml:"auto_create"`
	DefaultPartitions        int32 `toml:"default_partitions"`
	DefaultReplicationFactor int16 `toml:"default_replication_factor"`
}

// Limits bound what a peer can make the broker allocate.
type Limits struct {
	// MaxRequestBytes caps a request frame (Kafka's socket.request.max.bytes).
	MaxRequestBytes int32 `toml:"max_request_bytes"`
	// MaxConnections caps open client connections; 0 means unlimited.
	MaxConnections int `toml:"max_connections"`
	// MaxConnectionsPerIP caps connections from one address; 0 means
	// unlimited (Kafka's max.connections.per.ip).
	MaxConnectionsPerIP int `toml:"max_connections_per_ip"`
	// MaxConnectionCreationRate caps new connections a second across all
	// listeners; 0 means unlimited (Kafka's max.connection.creation.rate).
	// Per-address rates are client quotas on ip entities.
	MaxConnectionCreationRate float64 `toml:"max_connection_creation_rate"`
	// MaxConnectionsPerIPOverrides raises or lowers MaxConnectionsPerIP for
	// some addresses, as "host:count,host:count" (Kafka's
	// max.connections.per.ip.overrides); a host name is resolved at start.
	MaxConnectionsPerIPOverrides string `toml:"max_connections_per_ip_overrides"`
	// FetchMaxBytes caps the record bytes of one consumer fetch response
	// whatever the request asks (Kafka's fetch.max.bytes); the first batch
	// is still returned whole so a consumer always progresses.
	FetchMaxBytes int32 `toml:"fetch_max_bytes"`
	// MaxIncrementalFetchSessionCacheSlots bounds the incremental fetch
	// sessions (KIP-227) the broker keeps for consumers; 0 turns them off
	// and every fetch is full (Kafka's
	// max.incremental.fetch.session.cache.slots).
	MaxIncrementalFetchSessionCacheSlots int32 `toml:"max_incremental_fetch_session_cache_slots"`
	// QueuedMaxRequestBytes bounds the bytes of requests read but not yet
	// answered, across all connections; reading pauses at the bound
	// (Kafka's queued.max.request.bytes); -1 means unbounded.
	QueuedMaxRequestBytes int64 `toml:"queued_max_request_bytes"`
	// ConnectionMaxQueuedResponseBytes bounds the response bytes one
	// connection may have waiting to be sent: at the bound the broker stops
	// reading the connection's requests until its client reads (Kafka mutes
	// the channel of a connection with an unsent response).
	ConnectionMaxQueuedResponseBytes int64 `toml:"connection_max_queued_response_bytes"`
}

// ConnectionsPerIPOverrides parses MaxConnectionsPerIPOverrides; Validate
// has checked it.
func (l Limits) ConnectionsPerIPOverrides() (map[string]int, error) {
	out := map[string]int{}
	for _, e := range strings.Split(l.MaxConnectionsPerIPOverrides, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		i := strings.LastIndex(e, ":")
		if i <= 0 {
			return nil, fmt.Errorf("%q is not host:count", e)
		}
		n, err := strconv.Atoi(e[i+1:])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: the count is not a non-negative integer", e)
		}
		out[strings.Trim(e[:i], "[]")] = n
	}
	return out, nil
}

// Transactions configures the transaction coordinator and its
// __transaction_state topic (Kafka's transaction.state.log.* and
// transaction.* broker settings).
type Transactions struct {
	// StateLogPartitions is the partition count of __transaction_state when
	// it is created (transaction.state.log.num.partitions).
	StateLogPartitions int32 `toml:"state_log_partitions"`
	// StateLogReplicationFactor is its replication factor, capped at the
	// number of registered brokers.
	StateLogReplicationFactor int16 `toml:"state_log_replication_factor"`
	// StateLogSegmentBytes is its segment.bytes.
	StateLogSegmentBytes int64 `toml:"state_log_segment_bytes"`
	// MaxTimeoutMs bounds the transaction.timeout.ms producers may ask for.
	MaxTimeoutMs int64 `toml:"max_timeout_ms"`
	// AbortTimedOutCheckIntervalMs is how often open transactions are
	// checked against their timeout.
	AbortTimedOutCheckIntervalMs int64 `toml:"abort_timed_out_check_interval_ms"`
	// Version is the transaction.version feature finalized in ApiVersions:
	// 2 lets clients use KIP-890 part 2 (an epoch bump on every commit and
	// abort, partitions joining the transaction implicitly), 0 keeps them on
	// the earlier protocol.
	Version int16 `toml:"version"`
	// TransactionalIDExpirationMs is how long a transactional id with no
	// open transaction and no activity is kept
	// (transactional.id.expiration.ms).
	TransactionalIDExpirationMs int64 `toml:"transactional_id_expiration_ms"`
	// ProducerIDExpirationMs is how long a partition keeps the state of a
	// producer with no open transaction after its last write
	// (producer.id.expiration.ms).
	ProducerIDExpirationMs int64 `toml:"producer_id_expiration_ms"`
}

func (t *Transactions) validate(bad func(key, format string, args ...any) error) error {
	switch {
	case t.StateLogPartitions < 1:
		return bad("transactions.state_log_partitions", "%d is below 1", t.StateLogPartitions)
	case t.StateLogReplicationFactor < 1:
		return bad("transactions.state_log_replication_factor", "%d is below 1", t.StateLogReplicationFactor)
	case t.StateLogSegmentBytes < 14 || t.StateLogSegmentBytes > 1<<31-1:
		return bad("transactions.state_log_segment_bytes", "%d is not in [14, %d]", t.StateLogSegmentBytes, int64(1<<31-1))
	case t.MaxTimeoutMs < 1 || t.MaxTimeoutMs > 1<<31-1:
		return bad("transactions.max_timeout_ms", "%d is not in [1, %d]", t.MaxTimeoutMs, int64(1<<31-1))
	case t.AbortTimedOutCheckIntervalMs < 1:
		return bad("transactions.abort_timed_out_check_interval_ms", "%d is below 1", t.AbortTimedOutCheckIntervalMs)
	case t.Version < 0 || t.Version > 2:
		return bad("transactions.version", "%d is not 0, 1 or 2", t.Version)
	case t.TransactionalIDExpirationMs < 1 || t.TransactionalIDExpirationMs > 1<<31-1:
		return bad("transactions.transactional_id_expiration_ms", "%d is not in [1, %d]", t.TransactionalIDExpirationMs, int64(1<<31-1))
	case t.ProducerIDExpirationMs < 1 || t.ProducerIDExpirationMs > 1<<31-1:
		return bad("transactions.producer_id_expiration_ms", "%d is not in [1, %d]", t.ProducerIDExpirationMs, int64(1<<31-1))
	}
	return nil
}

// Groups configures the group coordinator and its __consumer_offsets topic.
// The keys are Kafka's broker settings with '_' for '.'.
type Groups struct {
	// OffsetsTopicPartitions is the partition count of __consumer_offsets
	// when it is created (offsets.topic.num.partitions).
	OffsetsTopicPartitions int32 `toml:"offsets_topic_partitions"`
	// OffsetsTopicReplicationFactor is its replication factor, capped at the
	// number of registered brokers so that a single node can start.
	OffsetsTopicReplicationFactor int16 `toml:"offsets_topic_replication_factor"`
	// OffsetsTopicSegmentBytes is its segment.bytes.
	OffsetsTopicSegmentBytes int64 `toml:"offsets_topic_segment_bytes"`
	// OffsetsRetentionMinutes is how long the offsets of a group stay after
	// it became empty (or, for a group without members, after the commit).
	OffsetsRetentionMinutes int64 `toml:"offsets_retention_minutes"`
	// OffsetsRetentionCheckIntervalMs is how often expired offsets are removed.
	OffsetsRetentionCheckIntervalMs int64 `toml:"offsets_retention_check_interval_ms"`
	// OffsetMetadataMaxBytes bounds the metadata string of a commit.
	OffsetMetadataMaxBytes int32 `toml:"offset_metadata_max_bytes"`
	// GroupInitialRebalanceDelayMs is how long the first rebalance of an
	// empty group waits for more members.
	GroupInitialRebalanceDelayMs int64 `toml:"group_initial_rebalance_delay_ms"`
	// GroupMinSessionTimeoutMs and GroupMaxSessionTimeoutMs bound the
	// session timeout a classic member may ask for.
	GroupMinSessionTimeoutMs int64 `toml:"group_min_session_timeout_ms"`
	GroupMaxSessionTimeoutMs int64 `toml:"group_max_session_timeout_ms"`
	// GroupMaxSize caps the members of one group.
	GroupMaxSize int32 `toml:"group_max_size"`
	// GroupConsumerSessionTimeoutMs and GroupConsumerHeartbeatIntervalMs are
	// the session timeout and heartbeat interval of consumer (KIP-848) groups.
	GroupConsumerSessionTimeoutMs    int64 `toml:"group_consumer_session_timeout_ms"`
	GroupConsumerHeartbeatIntervalMs int64 `toml:"group_consumer_heartbeat_interval_ms"`
	// GroupConsumerAssignors are the server-side assignors of consumer
	// groups, the first being the default: "uniform" and "range".
	GroupConsumerAssignors []string `toml:"group_consumer_assignors"`
	// The bounds of the group-level consumer.session.timeout.ms and
	// consumer.heartbeat.interval.ms (group.consumer.min/max.*).
	GroupConsumerMinSessionTimeoutMs    int64 `toml:"group_consumer_min_session_timeout_ms"`
	GroupConsumerMaxSessionTimeoutMs    int64 `toml:"group_consumer_max_session_timeout_ms"`
	GroupConsumerMinHeartbeatIntervalMs int64 `toml:"group_consumer_min_heartbeat_interval_ms"`
	GroupConsumerMaxHeartbeatIntervalMs int64 `toml:"group_consumer_max_heartbeat_interval_ms"`

	// Share groups (KIP-932), with Kafka's names and defaults:
	// group.share.session.timeout.ms, group.share.heartbeat.interval.ms
	// and their min/max bounds for the group-level configs.
	GroupShareSessionTimeoutMs       int64 `toml:"group_share_session_timeout_ms"`
	GroupShareMinSessionTimeoutMs    int64 `toml:"group_share_min_session_timeout_ms"`
	GroupShareMaxSessionTimeoutMs    int64 `toml:"group_share_max_session_timeout_ms"`
	GroupShareHeartbeatIntervalMs    int64 `toml:"group_share_heartbeat_interval_ms"`
	GroupShareMinHeartbeatIntervalMs int64 `toml:"group_share_min_heartbeat_interval_ms"`
	GroupShareMaxHeartbeatIntervalMs int64 `toml:"group_share_max_heartbeat_interval_ms"`
	// GroupShareMaxSize caps the members of one share group.
	GroupShareMaxSize int32 `toml:"group_share_max_size"`
	// GroupShareRecordLockDurationMs is how long an acquired record stays
	// locked to its consumer; the min/max bound the group-level
	// share.record.lock.duration.ms.
	GroupShareRecordLockDurationMs    int64 `toml:"group_share_record_lock_duration_ms"`
	GroupShareMinRecordLockDurationMs int64 `toml:"group_share_min_record_lock_duration_ms"`
	GroupShareMaxRecordLockDurationMs int64 `toml:"group_share_max_record_lock_duration_ms"`
	// GroupShareDeliveryCountLimit is how many times a record is delivered
	// before it is archived; the min/max bound share.delivery.count.limit.
	GroupShareDeliveryCountLimit    int32 `toml:"group_share_delivery_count_limit"`
	GroupShareMinDeliveryCountLimit int32 `toml:"group_share_min_delivery_count_limit"`
	GroupShareMaxDeliveryCountLimit int32 `toml:"group_share_max_delivery_count_limit"`
	// GroupSharePartitionMaxRecordLocks bounds the in-flight records of a
	// share-partition.
	GroupSharePartitionMaxRecordLocks int32 `toml:"group_share_partition_max_record_locks"`
	// The bounds of the group-level share.partition.max.record.locks.
	GroupShareMinPartitionMaxRecordLocks int32 `toml:"group_share_min_partition_max_record_locks"`
	GroupShareMaxPartitionMaxRecordLocks int32 `toml:"group_share_max_partition_max_record_locks"`
	// GroupShareMaxShareSessions bounds the share sessions of the broker.
	GroupShareMaxShareSessions int32 `toml:"group_share_max_share_sessions"`

	// ShareCoordinatorSnapshotUpdateRecordsPerSnapshot is how many
	// ShareUpdate records of a share-partition follow its ShareSnapshot in
	// __share_group_state before the next write is a snapshot again
	// (share.coordinator.snapshot.update.records.per.snapshot, 500).
	ShareCoordinatorSnapshotUpdateRecordsPerSnapshot int32 `toml:"share_coordinator_snapshot_update_records_per_snapshot"`

	// GroupStreams* are Kafka's group.streams.* settings of streams
	// (KIP-1071) groups: session timeout, heartbeat interval, and the
	// standby replicas of each task (at most group_streams_max_standby_replicas).
	GroupStreamsSessionTimeoutMs    int64 `toml:"group_streams_session_timeout_ms"`
	GroupStreamsHeartbeatIntervalMs int64 `toml:"group_streams_heartbeat_interval_ms"`
	GroupStreamsNumStandbyReplicas  int32 `toml:"group_streams_num_standby_replicas"`
	GroupStreamsMaxStandbyReplicas  int32 `toml:"group_streams_max_standby_replicas"`
}

// Durability modes.
const (
	DurabilityFsync     = "fsync"
	DurabilityPageCache = "page_cache"
)

// Default is the single-node configuration that broker.toml spells out.
func Default() Config {
	return Config{
		NodeID:  1,
		DataDir: "./data",
		Listeners: Listeners{
			Kafka: "127.0.0.1:9092",
			HTTP:  "127.0.0.1:9644",
		},
		Cluster:     defaultCluster(),
		Replication: defaultReplication(),
		Log: Log{
			SegmentBytes:                    1 << 30,
			SegmentMs:                       7 * 24 * 3600 * 1000,
			IndexIntervalBytes:              4096,
			RetentionMs:                     7 * 24 * 3600 * 1000,
			RetentionBytes:                  -1,
			RetentionCheckIntervalMs:        300000,
			MaxMessageBytes:                 1048588,
			MessageTimestampType:            "CreateTime",
			CleanupPolicy:                   "delete",
			MinInsyncReplicas:               1,
			Durability:                      DurabilityFsync,
			FlushIntervalMs:                 -1,
			FlushIntervalMessages:           -1,
			FlushSchedulerIntervalMs:        1000,
			FlushOffsetCheckpointIntervalMs: 60000,
			CleanerBackoffMs:                15000,
		},
		Topics: Topics{
			AutoCreate:               true,
			DefaultPartitions:        1,
			DefaultReplicationFactor: 1,
		},
		Limits: Limits{
			MaxRequestBytes:                      100 << 20,
			FetchMaxBytes:                        55 << 20,
			MaxIncrementalFetchSessionCacheSlots: 1000,
			QueuedMaxRequestBytes:                -1,
			ConnectionMaxQueuedResponseBytes:     1 << 20,
		},
		Security: defaultSecurity(),
		Transactions: Transactions{
			StateLogPartitions:           50,
			StateLogReplicationFactor:    3,
			StateLogSegmentBytes:         100 << 20,
			MaxTimeoutMs:                 900000,
			AbortTimedOutCheckIntervalMs: 10000,
			Version:                      2,
			TransactionalIDExpirationMs:  7 * 24 * 3600 * 1000,
			ProducerIDExpirationMs:       24 * 3600 * 1000,
		},
		Groups: Groups{
			OffsetsTopicPartitions:           50,
			OffsetsTopicReplicationFactor:    3,
			OffsetsTopicSegmentBytes:         100 << 20,
			OffsetsRetentionMinutes:          7 * 24 * 60,
			OffsetsRetentionCheckIntervalMs:  600000,
			OffsetMetadataMaxBytes:           4096,
			GroupInitialRebalanceDelayMs:     3000,
			GroupMinSessionTimeoutMs:         6000,
			GroupMaxSessionTimeoutMs:         1800000,
			GroupMaxSize:                     2147483647,
			GroupConsumerSessionTimeoutMs:    45000,
			GroupConsumerHeartbeatIntervalMs: 5000,
			GroupConsumerAssignors:           []string{"uniform", "range"},

			GroupConsumerMinSessionTimeoutMs:     45000,
			GroupConsumerMaxSessionTimeoutMs:     60000,
			GroupConsumerMinHeartbeatIntervalMs:  5000,
			GroupConsumerMaxHeartbeatIntervalMs:  15000,
			GroupShareSessionTimeoutMs:           45000,
			GroupShareMinSessionTimeoutMs:        45000,
			GroupShareMaxSessionTimeoutMs:        60000,
			GroupShareHeartbeatIntervalMs:        5000,
			GroupShareMinHeartbeatIntervalMs:     5000,
			GroupShareMaxHeartbeatIntervalMs:     15000,
			GroupShareMaxSize:                    200,
			GroupShareRecordLockDurationMs:       30000,
			GroupShareMinRecordLockDurationMs:    15000,
			GroupShareMaxRecordLockDurationMs:    60000,
			GroupShareDeliveryCountLimit:         5,
			GroupShareMinDeliveryCountLimit:      2,
			GroupShareMaxDeliveryCountLimit:      10,
			GroupSharePartitionMaxRecordLocks:    2000,
			GroupShareMaxShareSessions:           2000,
			GroupShareMinPartitionMaxRecordLocks: 100,
			GroupShareMaxPartitionMaxRecordLocks: 4000,
			GroupStreamsSessionTimeoutMs:         45000,
			GroupStreamsHeartbeatIntervalMs:      5000,
			GroupStreamsNumStandbyReplicas:       0,
			GroupStreamsMaxStandbyReplicas:       2,

			ShareCoordinatorSnapshotUpdateRecordsPerSnapshot: 500,
		},
		Telemetry: defaultTelemetry(),
	}
}

// Load reads a TOML file over Default. Unknown keys are an error naming them.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return Parse(string(data))
}

// Parse decodes TOML text over Default and validates the result.
func Parse(text string) (Config, error) {
	cfg := Default()
	md, err := toml.Decode(text, &cfg)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return Config{}, fmt.Errorf("config: %s", perr.ErrorWithPosition())
		}
		return Config{}, fmt.Errorf("config: %w", err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		keys := make([]string, len(undec))
		for i, k := range undec {
			keys[i] = k.String()
		}
		return Config{}, fmt.Errorf("config: unknown key %s", strings.Join(keys, ", "))
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate reports the first invalid setting, naming its key.
func (c *Config) Validate() error {
	bad := func(key string, format string, args ...any) error {
		return fmt.Errorf("config: invalid %s: %s", key, fmt.Sprintf(format, args...))
	}
	if c.NodeID < 0 {
		return bad("node_id", "%d is negative", c.NodeID)
	}
	if c.DataDir == "" {
		return bad("data_dir", "must not be empty")
	}
	if _, _, err := net.SplitHostPort(c.Listeners.Kafka); err != nil {
		return bad("listeners.kafka", "%q: %v", c.Listeners.Kafka, err)
	}
	if c.Listeners.KafkaAdvertised != "" {
		if _, _, err := net.SplitHostPort(c.Listeners.KafkaAdvertised); err != nil {
			return bad("listeners.kafka_advertised", "%q: %v", c.Listeners.KafkaAdvertised, err)
		}
	}
	if c.Listeners.HTTP != "" {
		if _, _, err := net.SplitHostPort(c.Listeners.HTTP); err != nil {
			return bad("listeners.http", "%q: %v", c.Listeners.HTTP, err)
		}
	}
	l := c.Log
	switch {
	case l.SegmentBytes < 14:
		return bad("log.segment_bytes", "%d is below 14", l.SegmentBytes)
	case l.SegmentBytes > 1<<31-1:
		return bad("log.segment_bytes", "%d is above %d (index positions are 32-bit)", l.SegmentBytes, int64(1<<31-1))
	case l.SegmentMs < 1:
		return bad("log.segment_ms", "%d is below 1", l.SegmentMs)
	case l.IndexIntervalBytes < 0:
		return bad("log.index_interval_bytes", "%d is negative", l.IndexIntervalBytes)
	case l.RetentionMs < -1:
		return bad("log.retention_ms", "%d is below -1", l.RetentionMs)
	case l.RetentionBytes < -1:
		return bad("log.retention_bytes", "%d is below -1", l.RetentionBytes)
	case l.RetentionCheckIntervalMs < 1:
		return bad("log.retention_check_interval_ms", "%d is below 1", l.RetentionCheckIntervalMs)
	case l.MaxMessageBytes < 0:
		return bad("log.max_message_bytes", "%d is negative", l.MaxMessageBytes)
	case l.MessageTimestampType != "CreateTime" && l.MessageTimestampType != "LogAppendTime":
		return bad("log.message_timestamp_type", "%q is not CreateTime or LogAppendTime", l.MessageTimestampType)
	case l.MinInsyncReplicas < 1:
		return bad("log.min_insync_replicas", "%d is below 1", l.MinInsyncReplicas)
	case l.Durability != DurabilityFsync && l.Durability != DurabilityPageCache:
		return bad("log.durability", "%q is not %q or %q", l.Durability, DurabilityFsync, DurabilityPageCache)
	case l.FlushIntervalMs < -1 || l.FlushIntervalMs == 0:
		return bad("log.flush_interval_ms", "%d must be -1 or positive", l.FlushIntervalMs)
	case l.FlushIntervalMessages < -1 || l.FlushIntervalMessages == 0:
		return bad("log.flush_interval_messages", "%d must be -1 or positive", l.FlushIntervalMessages)
	case l.FlushSchedulerIntervalMs < 1:
		return bad("log.flush_scheduler_interval_ms", "%d is below 1", l.FlushSchedulerIntervalMs)
	case l.FlushOffsetCheckpointIntervalMs < 1:
		return bad("log.flush_offset_checkpoint_interval_ms", "%d is below 1", l.FlushOffsetCheckpointIntervalMs)
	case l.CleanerBackoffMs < 1:
		return bad("log.cleaner_backoff_ms", "%d is below 1", l.CleanerBackoffMs)
	}
	if err := ValidateCleanupPolicy(l.CleanupPolicy); err != nil {
		return bad("log.cleanup_policy", "%v", err)
	}
	if c.Topics.DefaultPartitions < 1 {
		return bad("topics.default_partitions", "%d is below 1", c.Topics.DefaultPartitions)
	}
	if c.Topics.DefaultReplicationFactor < 1 {
		return bad("topics.default_replication_factor", "%d is below 1", c.Topics.DefaultReplicationFactor)
	}
	if c.Limits.MaxRequestBytes < 1024 {
		return bad("limits.max_request_bytes", "%d is below 1024", c.Limits.MaxRequestBytes)
	}
	if c.Limits.MaxConnections < 0 {
		return bad("limits.max_connections", "%d is negative", c.Limits.MaxConnections)
	}
	if c.Limits.MaxConnectionsPerIP < 0 {
		return bad("limits.max_connections_per_ip", "%d is negative", c.Limits.MaxConnectionsPerIP)
	}
	if _, err := c.Limits.ConnectionsPerIPOverrides(); err != nil {
		return bad("limits.max_connections_per_ip_overrides", "%v", err)
	}
	if c.Limits.FetchMaxBytes < 1024 {
		return bad("limits.fetch_max_bytes", "%d is below 1024", c.Limits.FetchMaxBytes)
	}
	if c.Limits.MaxIncrementalFetchSessionCacheSlots < 0 {
		return bad("limits.max_incremental_fetch_session_cache_slots", "%d is negative", c.Limits.MaxIncrementalFetchSessionCacheSlots)
	}
	if c.Limits.QueuedMaxRequestBytes != -1 && c.Limits.QueuedMaxRequestBytes < int64(c.Limits.MaxRequestBytes) {
		return bad("limits.queued_max_request_bytes", "%d is neither -1 nor at least max_request_bytes %d",
			c.Limits.QueuedMaxRequestBytes, c.Limits.MaxRequestBytes)
	}
	if c.Limits.ConnectionMaxQueuedResponseBytes < 1 {
		return bad("limits.connection_max_queued_response_bytes", "%d is below 1", c.Limits.ConnectionMaxQueuedResponseBytes)
	}
	if !(c.Limits.MaxConnectionCreationRate >= 0) {
		return bad("limits.max_connection_creation_rate", "%v is negative", c.Limits.MaxConnectionCreationRate)
	}
	if err := c.validateCluster(bad); err != nil {
		return err
	}
	if err := c.Replication.validate(bad); err != nil {
		return err
	}
	if err := c.validateSecurity(bad); err != nil {
		return err
	}
	if err := c.validateInterBroker(bad); err != nil {
		return err
	}
	if err := c.validateControllerPlane(bad); err != nil {
		return err
	}
	if err := c.validateExtensions(bad); err != nil {
		return err
	}
	if err := c.Transactions.validate(bad); err != nil {
		return err
	}
	if err := c.Telemetry.validate(bad); err != nil {
		return err
	}
	return c.Groups.validate(bad)
}

func (g *Groups) validate(bad func(key, format string, args ...any) error) error {
	switch {
	case g.OffsetsTopicPartitions < 1:
		return bad("groups.offsets_topic_partitions", "%d is below 1", g.OffsetsTopicPartitions)
	case g.OffsetsTopicReplicationFactor < 1:
		return bad("groups.offsets_topic_replication_factor", "%d is below 1", g.OffsetsTopicReplicationFactor)
	case g.OffsetsTopicSegmentBytes < 14 || g.OffsetsTopicSegmentBytes > 1<<31-1:
		return bad("groups.offsets_topic_segment_bytes", "%d is not in [14, %d]", g.OffsetsTopicSegmentBytes, int64(1<<31-1))
	case g.OffsetsRetentionMinutes < 1:
		return bad("groups.offsets_retention_minutes", "%d is below 1", g.OffsetsRetentionMinutes)
	case g.OffsetsRetentionCheckIntervalMs < 1:
		return bad("groups.offsets_retention_check_interval_ms", "%d is below 1", g.OffsetsRetentionCheckIntervalMs)
	case g.OffsetMetadataMaxBytes < 0:
		return bad("groups.offset_metadata_max_bytes", "%d is negative", g.OffsetMetadataMaxBytes)
	case g.GroupInitialRebalanceDelayMs < 0:
		return bad("groups.group_initial_rebalance_delay_ms", "%d is negative", g.GroupInitialRebalanceDelayMs)
	case g.GroupMinSessionTimeoutMs < 1:
		return bad("groups.group_min_session_timeout_ms", "%d is below 1", g.GroupMinSessionTimeoutMs)
	case g.GroupMaxSessionTimeoutMs < g.GroupMinSessionTimeoutMs:
		return bad("groups.group_max_session_timeout_ms", "%d is below group_min_session_timeout_ms %d",
			g.GroupMaxSessionTimeoutMs, g.GroupMinSessionTimeoutMs)
	case g.GroupMaxSize < 1:
		return bad("groups.group_max_size", "%d is below 1", g.GroupMaxSize)
	case g.GroupConsumerSessionTimeoutMs < 1:
		return bad("groups.group_consumer_session_timeout_ms", "%d is below 1", g.GroupConsumerSessionTimeoutMs)
	case g.GroupConsumerHeartbeatIntervalMs < 1 || g.GroupConsumerHeartbeatIntervalMs >= g.GroupConsumerSessionTimeoutMs:
		return bad("groups.group_consumer_heartbeat_interval_ms", "%d must be positive and below group_consumer_session_timeout_ms %d",
			g.GroupConsumerHeartbeatIntervalMs, g.GroupConsumerSessionTimeoutMs)
	case len(g.GroupConsumerAssignors) == 0:
		return bad("groups.group_consumer_assignors", "at least one assignor is needed")
	case g.GroupStreamsSessionTimeoutMs < 1:
		return bad("groups.group_streams_session_timeout_ms", "%d is below 1", g.GroupStreamsSessionTimeoutMs)
	case g.GroupStreamsHeartbeatIntervalMs < 1 || g.GroupStreamsHeartbeatIntervalMs >= g.GroupStreamsSessionTimeoutMs:
		return bad("groups.group_streams_heartbeat_interval_ms", "%d must be positive and below group_streams_session_timeout_ms %d",
			g.GroupStreamsHeartbeatIntervalMs, g.GroupStreamsSessionTimeoutMs)
	case g.GroupStreamsMaxStandbyReplicas < 0:
		return bad("groups.group_streams_max_standby_replicas", "%d is negative", g.GroupStreamsMaxStandbyReplicas)
	case g.GroupStreamsNumStandbyReplicas < 0 || g.GroupStreamsNumStandbyReplicas > g.GroupStreamsMaxStandbyReplicas:
		return bad("groups.group_streams_num_standby_replicas", "%d must be between 0 and group_streams_max_standby_replicas %d",
			g.GroupStreamsNumStandbyReplicas, g.GroupStreamsMaxStandbyReplicas)
	}
	if err := validateShareGroups(*g, bad); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, a := range g.GroupConsumerAssignors {
		if a != "uniform" && a != "range" {
			return bad("groups.group_consumer_assignors", "%q is not uniform or range", a)
		}
		if seen[a] {
			return bad("groups.group_consumer_assignors", "%q is listed twice", a)
		}
		seen[a] = true
	}
	return nil
}

// ValidateCleanupPolicy accepts Kafka's cleanup.policy values.
func ValidateCleanupPolicy(v string) error {
	seen := map[string]bool{}
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p != "delete" && p != "compact" {
			return fmt.Errorf("%q is not delete or compact", p)
		}
		if seen[p] {
			return fmt.Errorf("%q is listed twice", p)
		}
		seen[p] = true
	}
	return nil
}

// AdvertisedKafka is the host:port clients are told to connect to.
func (c *Config) AdvertisedKafka() string {
	if c.Listeners.KafkaAdvertised != "" {
		return c.Listeners.KafkaAdvertised
	}
	return c.Listeners.Kafka
}
