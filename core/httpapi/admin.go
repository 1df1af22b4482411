package httpapi

import (
	"context"
	"errors"
)

// Admin is the broker's read-only view for the admin API (/api/v1). Every
// method authorizes the request's principal (see RequestPrincipal) the way
// the Kafka listener would: lists leave out what the principal may not
// describe, and a named entity it may not see is ErrNotAuthorized.
type Admin interface {
	Cluster(ctx context.Context) (Cluster, error)
	Topics(ctx context.Context) ([]TopicSummary, error)
	Topic(ctx context.Context, name string) (TopicDetail, error)
	Records(ctx context.Context, q RecordsQuery) (RecordPage, error)
	Groups(ctx context.Context) ([]GroupSummary, error)
	Group(ctx context.Context, id string) (GroupDetail, error)
	Extensions(ctx context.Context) ([]Extension, error)
}

// MirrorLinks is the view of the mirror's links; a broker without a
// mirror serves an empty list.
type MirrorLinks interface {
	MirrorLinks(ctx context.Context) ([]MirrorLink, error)
}

// Errors an Admin returns; the handlers map them to HTTP statuses. Wrap
// them with %w to add detail.
var (
	// ErrNotFound: the named topic, partition or group does not exist.
	ErrNotFound = errors.New("not found")
	// ErrBadRequest: the query cannot be answered as asked.
	ErrBadRequest = errors.New("bad request")
	// ErrUnavailable: the broker cannot answer now (a coordinator is
	// loading, a partition is not hosted here); trying again may work.
	ErrUnavailable = errors.New("unavailable")
)

// Cluster is the cluster as one broker sees it.
type Cluster struct {
	ClusterID    string   `json:"cluster_id"`
	ControllerID int32    `json:"controller_id"`
	NodeID       int32    `json:"node_id"`
	Version      string   `json:"version"`
	Brokers      []Broker `json:"brokers"`
	// MetadataOffset is the raft index of the metadata image answered from.
	MetadataOffset       uint64 `json:"metadata_offset"`
	Topics               int    `json:"topics"`
	Partitions           int    `json:"partitions"`
	UnderReplicated      int    `json:"under_replicated_partitions"`
	Offline              int    `json:"offline_partitions"`
	UnderMinISR          int    `json:"under_min_isr_partitions"`
	Groups               int    `json:"groups"`
	SizeBytes            int64  `json:"size_bytes"`
	SecurityAuthorizer   string `json:"authorizer"`
	AuthenticationNeeded bool   `json:"authentication_required"`
}

// Broker is a registered broker.
type Broker struct {
	NodeID     int32      `json:"node_id"`
	Host       string     `json:"host"`
	Port       int32      `json:"port"`
	Rack       string     `json:"rack,omitempty"`
	Endpoints  []Endpoint `json:"endpoints,omitempty"`
	Controller bool       `json:"controller"`
	// Leaders and Replicas count the partitions it leads and holds.
	Leaders  int `json:"leaders"`
	Replicas int `json:"replicas"`
}

// Endpoint is one advertised listener.
type Endpoint struct {
	Listener string `json:"listener"`
	Host     string `json:"host"`
	Port     int32  `json:"port"`
}

// TopicSummary is a topic in the topics list.
type TopicSummary struct {
	Name              string `json:"name"`
	ID                string `json:"id"`
	Internal          bool   `json:"internal"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	UnderReplicated   int    `json:"under_replicated_partitions"`
	Offline           int    `json:"offline_partitions"`
	// Records is the sum over partitions of high watermark minus log
	// start offset (an upper bound after compaction).
	Records   int64 `json:"records"`
	SizeBytes int64 `json:"size_bytes"`
}

// TopicDetail is one topic with its partitions and configuration.
type TopicDetail struct {
	TopicSummary
	PartitionList []PartitionState `json:"partition_list"`
	// Configs are the effective values; Overrides names those set on
	// the topic itself.
	Configs   map[string]string `json:"configs"`
	Overrides []string          `json:"overrides"`
}

// PartitionState is a partition's assignment, leadership and offsets.
// Offsets and sizes are -1 when the partition is not hosted on the
// answering broker.
type PartitionState struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	UnderReplicated bool    `json:"under_replicated"`
	Offline         bool    `json:"offline"`
	LogStartOffset  int64   `json:"log_start_offset"`
	HighWatermark   int64   `json:"high_watermark"`
	LogEndOffset    int64   `json:"log_end_offset"`
	SizeBytes       int64   `json:"size_bytes"`
	Segments        int     `json:"segments"`
}

// RecordsQuery asks for records of one partition from an offset, or from
// the first offset whose timestamp is at or after Timestamp when
// Timestamp >= 0.
type RecordsQuery struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp int64 // -1: use Offset
	// Limit bounds the records returned and MaxBytes the batch bytes
	// read; the handler clamps both.
	Limit    int
	MaxBytes int
}

// Record is one record; keys, values and header values are base64
// (standard encoding), absent for null.
type Record struct {
	Partition     int32          `json:"partition"`
	Offset        int64          `json:"offset"`
	Timestamp     int64          `json:"timestamp"`
	TimestampType string         `json:"timestamp_type"`
	Key           *[]byte        `json:"key"`
	Value         *[]byte        `json:"value"`
	Headers       []RecordHeader `json:"headers"`
	// Size is the key and value length in bytes.
	Size int `json:"size"`
}

// RecordHeader is one record header.
type RecordHeader struct {
	Key   string  `json:"key"`
	Value *[]byte `json:"value"`
}

// RecordPage is an answer to a RecordsQuery. NextOffset continues the
// read; Truncated says the limit or the byte bound stopped it before the
// high watermark.
type RecordPage struct {
	Topic          string   `json:"topic"`
	Partition      int32    `json:"partition"`
	StartOffset    int64    `json:"start_offset"`
	NextOffset     int64    `json:"next_offset"`
	LogStartOffset int64    `json:"log_start_offset"`
	HighWatermark  int64    `json:"high_watermark"`
	Truncated      bool     `json:"truncated"`
	Records        []Record `json:"records"`
}

// GroupSummary is a group in the groups list.
type GroupSummary struct {
	Group        string `json:"group"`
	Type         string `json:"type"`
	State        string `json:"state"`
	ProtocolType string `json:"protocol_type"`
	Members      int    `json:"members"`
	// Lag is the sum of the lag of every committed partition.
	Lag int64 `json:"lag"`
}

// GroupDetail is a group with members, assignments and lag per partition.
type GroupDetail struct {
	GroupSummary
	Protocol   string           `json:"protocol"`
	MemberList []GroupMember    `json:"member_list"`
	Offsets    []PartitionLag   `json:"offsets"`
	LagByTopic map[string]int64 `json:"lag_by_topic"`
	// LagHistory is filled by the handler from the lag sampler.
	LagHistory []LagSample `json:"lag_history"`
}

// GroupMember is a member and the partitions assigned to it.
type GroupMember struct {
	MemberID   string             `json:"member_id"`
	InstanceID string             `json:"instance_id,omitempty"`
	ClientID   string             `json:"client_id"`
	ClientHost string             `json:"client_host"`
	Assignment map[string][]int32 `json:"assignment"`
}

// PartitionLag is a group's committed offset on a partition and its lag
// against the high watermark. Lag is -1 when the partition is not hosted
// here (its high watermark is unknown).
type PartitionLag struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	CommittedOffset int64  `json:"committed_offset"`
	HighWatermark   int64  `json:"high_watermark"`
	Lag             int64  `json:"lag"`
	Metadata        string `json:"metadata,omitempty"`
	MemberID        string `json:"member_id,omitempty"`
	// StartOffset, InFlight and Acquired are a share group's: its
	// share-partition start offset, the records between it and the end
	// offset, and those under an acquisition lock (-1: not served here).
	StartOffset *int64 `json:"start_offset,omitempty"`
	InFlight    *int64 `json:"in_flight,omitempty"`
	Acquired    *int64 `json:"acquired,omitempty"`
}

// LagSample is a group's total lag at one moment (Unix milliseconds).
type LagSample struct {
	Time int64 `json:"time"`
	Lag  int64 `json:"lag"`
}

// Extension is a loaded extension with its call statistics.
type Extension struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Runtime string `json:"runtime"`
	Path    string `json:"path,omitempty"`
	// Fallback says what applies when a call fails.
	Fallback string   `json:"fallback"`
	Topics   []string `json:"topics"`
	ExtensionStats
}

// ExtensionStats count an extension's calls since the broker started.
type ExtensionStats struct {
	Calls     uint64  `json:"calls"`
	Errors    uint64  `json:"errors"`
	Fallbacks uint64  `json:"fallbacks"`
	MeanMs    float64 `json:"mean_latency_ms"`
	MaxMs     float64 `json:"max_latency_ms"`
}

// MirrorLink is one mirror link and how far behind its source it is.
type MirrorLink struct {
	Name        string   `json:"name"`
	Source      string   `json:"source"`
	State       string   `json:"state"`
	Topics      []string `json:"topics"`
	LagRecords  int64    `json:"lag_records"`
	RecordAgeMs int64    `json:"record_age_ms"`
	LastError   string   `json:"last_error,omitempty"`
	// FailingPartitions counts partitions a persistent error stopped.
	FailingPartitions int         `json:"failing_partitions"`
	PartitionLags     []MirrorLag `json:"partitions,omitempty"`
}

// MirrorLag is one mirrored partition's lag and state. Times are RFC 3339,
// omitted when unknown.
type MirrorLag struct {
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	LagRecords int64  `json:"lag_records"`
	State      string `json:"state,omitempty"`
	Error      string `json:"error,omitempty"`
	FailedAt   string `json:"failed_at,omitempty"`
	RetryAt    string `json:"retry_at,omitempty"`
	LastWrite  string `json:"last_write,omitempty"`
	TooLarge   int64  `json:"records_too_large,omitempty"`
}
