package config

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Topic-level configs use Kafka's names, types, defaults and validity ranges
// (Kafka 4.0, except segment.bytes, which keeps the 3.x floor of 14 bytes so
// that small segments remain possible, matching log.segment_bytes).

// ErrUnknownTopicConfig is wrapped by errors for a config name Gregor does not
// support at topic level.
var ErrUnknownTopicConfig = errors.New("unknown topic config")

// ErrInvalidTopicConfig is wrapped by errors for a value a topic config does
// not accept.
var ErrInvalidTopicConfig = errors.New("invalid topic config")

// Topic config value types, as Kafka's DescribeConfigs names them.
const (
	TypeBoolean = "boolean"
	TypeString  = "string"
	TypeInt     = "int"
	TypeLong    = "long"
	TypeDouble  = "double"
	TypeList    = "list"
)

// TopicConfigDef describes one topic-level config.
type TopicConfigDef struct {
	// Name is Kafka's topic config name, e.g. "retention.ms".
	Name string
	// Type is one of "long", "int", "string", "boolean", "double", "list".
	Type string
	// Doc is the one-paragraph description DescribeConfigs returns.
	Doc string
	// Sensitive values are never returned to clients.
	Sensitive bool
	// Validate reports why v is not an acceptable value (nil when it is).
	Validate func(v string) error
	// BrokerDefault is the value a topic without an override uses.
	BrokerDefault func(c *Config) string
	// BrokerSynonym is Kafka's broker-level name for the same setting
	// (e.g. "log.retention.ms"), used for DescribeConfigs synonyms and
	// broker-level dynamic configs.
	BrokerSynonym string
}

// maxLong is Kafka's Long.MAX_VALUE, the "never" default of several configs.
var maxLong = strconv.FormatInt(math.MaxInt64, 10)

func constant(v string) func(*Config) string { return func(*Config) string { return v } }

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

func longAtLeast(min int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a long", v)
		}
		if n < min {
			return fmt.Errorf("%d is below %d", n, min)
		}
		return nil
	}
}

func anyLong(v string) error { return longAtLeast(math.MinInt64)(v) }

func intAtLeast(min int32) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("%q is not an int", v)
		}
		if n < int64(min) {
			return fmt.Errorf("%d is below %d", n, min)
		}
		return nil
	}
}

func doubleBetween(min, max float64) func(string) error {
	return func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) {
			return fmt.Errorf("%q is not a double", v)
		}
		if f < min || f > max {
			return fmt.Errorf("%v is not in [%v, %v]", f, min, max)
		}
		return nil
	}
}

func boolean(v string) error {
	if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		return fmt.Errorf("%q is not true or false", v)
	}
	return nil
}

func extensionName(v string) error {
	if !validExtensionName(v) {
		return fmt.Errorf("%q is not an extension name (letters, digits, '-', '_' or '.')", v)
	}
	return nil
}

// MirrorLinkPrefix starts the transactional id with which a mirror link
// appends to the topics whose gregor.mirror.link names it.
const MirrorLinkPrefix = "__gregor_link:"

// mirrorLinkName accepts "" (no link) or a name of up to 249 printable
// ASCII characters.
func mirrorLinkName(v string) error {
	if len(v) > 249 {
		return fmt.Errorf("link name of %d characters is longer than 249", len(v))
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] > '~' {
			return fmt.Errorf("link name %q holds a space or a character outside printable ASCII", v)
		}
	}
	return nil
}

func oneOf(values ...string) func(string) error {
	return func(v string) error {
		for _, ok := range values {
			if v == ok {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(values, ", "))
	}
}

var topicConfigDefs = []TopicConfigDef{
	{
		Name: "cleanup.policy", Type: TypeList, BrokerSynonym: "log.cleanup.policy",
		Doc:           `Either "delete", "compact" or both ("compact,delete"). "delete" discards old segments when their retention time or size limit is reached; "compact" keeps the latest value of every key.`,
		Validate:      ValidateCleanupPolicy,
		BrokerDefault: func(c *Config) string { return c.Log.CleanupPolicy },
	},
	{
		Name: "compression.type", Type: TypeString, BrokerSynonym: "compression.type",
		Doc:           `The final compression of the topic's batches: uncompressed, zstd, lz4, snappy or gzip, or "producer" to keep the producer's codec.`,
		Validate:      oneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
		BrokerDefault: constant("producer"),
	},
	{
		Name: "delete.retention.ms", Type: TypeLong, BrokerSynonym: "log.cleaner.delete.retention.ms",
		Doc:           "How long delete tombstones are retained in a compacted topic; also a bound on how long a consumer reading from offset 0 may take to see a consistent snapshot.",
		Validate:      longAtLeast(0),
		BrokerDefault: constant("86400000"),
	},
	{
		Name: "file.delete.delay.ms", Type: TypeLong, BrokerSynonym: "log.segment.delete.delay.ms",
		Doc:           "How long to wait before deleting a file from the filesystem.",
		Validate:      longAtLeast(0),
		BrokerDefault: constant("60000"),
	},
	{
		Name: "flush.messages", Type: TypeLong, BrokerSynonym: "log.flush.interval.messages",
		Doc:      "Force an fsync after this many messages have been written to a partition. Replication, not fsync, is the recommended durability mechanism.",
		Validate: longAtLeast(1),
		BrokerDefault: func(c *Config) string {
			if c.Log.FlushIntervalMessages < 0 {
				return maxLong
			}
			return itoa64(c.Log.FlushIntervalMessages)
		},
	},
	{
		Name: "flush.ms", Type: TypeLong, BrokerSynonym: "log.flush.interval.ms",
		Doc:      "Force an fsync when data has been unflushed for this many milliseconds.",
		Validate: longAtLeast(0),
		BrokerDefault: func(c *Config) string {
			if c.Log.FlushIntervalMs < 0 {
				return maxLong
			}
			return itoa64(c.Log.FlushIntervalMs)
		},
	},
	{
		Name: "gregor.interceptor.fetch", Type: TypeString,
		Doc:           `The record interceptor the topic's records pass through before they reach a consumer (never a follower): "none", or the name of an interceptor extension in broker.toml, which may mask keys, values and headers or drop records (a dropped record leaves an offset gap, as compaction does). Without one, records are sent as stored, zero-copy where the connection allows.`,
		Validate:      extensionName,
		BrokerDefault: constant(NoInterceptor),
	},
	{
		Name: "gregor.interceptor.produce", Type: TypeString,
		Doc:           `The record interceptor produced batches of the topic pass through before they are appended: "none", or the name of an interceptor extension in broker.toml, which accepts, rejects (INVALID_RECORD with per-record errors) or rewrites each batch.`,
		Validate:      extensionName,
		BrokerDefault: constant(NoInterceptor),
	},
	{
		Name: "gregor.mirror.link", Type: TypeString,
		Doc:           `The mirror link that owns the topic, or "" for none. A linked topic is read-only: ordinary produce is refused with POLICY_VIOLATION and only that link appends, at the source's offsets. Deleting the config (gregor mirror promote) makes the topic writable.`,
		Validate:      mirrorLinkName,
		BrokerDefault: constant(""),
	},
	{
		Name: "gregor.partitioner", Type: TypeString,
		Doc:           `The partitioner of the topic: "murmur2" (Kafka's default placement of keyed records) or the name of a partitioner extension in broker.toml. Produce over HTTP, gregor produce and the placement check use it.`,
		Validate:      extensionName,
		BrokerDefault: constant(BuiltinPartitioner),
	},
	{
		Name: "gregor.partitioner.enforce", Type: TypeBoolean,
		Doc:           "Whether a produced keyed record must be in the partition the topic's partitioner chooses for it; a batch with a misplaced record is rejected with INVALID_RECORD naming the expected partition.",
		Validate:      boolean,
		BrokerDefault: constant("false"),
	},
	{
		Name: "gregor.retention.policy", Type: TypeString,
		Doc:           `The retention policy of the topic: "time_size" (retention.ms and retention.bytes) or the name of a retention extension in broker.toml, which then decides alone which old segments go.`,
		Validate:      extensionName,
		BrokerDefault: constant(BuiltinRetention),
	},
	{
		Name: "index.interval.bytes", Type: TypeInt, BrokerSynonym: "log.index.interval.bytes",
		Doc:           "How many bytes of log may separate two offset index entries.",
		Validate:      intAtLeast(0),
		BrokerDefault: func(c *Config) string { return itoa64(int64(c.Log.IndexIntervalBytes)) },
	},
	{
		Name: FollowerReplicationThrottledReplicas, Type: TypeList,
		Doc:           `The replicas of the topic whose replication is throttled on the follower side (follower.replication.throttled.rate of the broker holding them): a list of [partition]:[broker id] pairs, or "*" for every replica of the topic.`,
		Validate:      validThrottledReplicas,
		BrokerDefault: constant(""),
	},
	{
		Name: LeaderReplicationThrottledReplicas, Type: TypeList,
		Doc:           `The replicas of the topic whose replication is throttled on the leader side (leader.replication.throttled.rate of the broker holding them): a list of [partition]:[broker id] pairs, or "*" for every replica of the topic.`,
		Validate:      validThrottledReplicas,
		BrokerDefault: constant(""),
	},
	{
		Name: "max.compaction.lag.ms", Type: TypeLong, BrokerSynonym: "log.cleaner.max.compaction.lag.ms",
		Doc:           "The longest time a message stays ineligible for compaction in the log.",
		Validate:      longAtLeast(1),
		BrokerDefault: constant(maxLong),
	},
	{
		Name: "max.message.bytes", Type: TypeInt, BrokerSynonym: "message.max.bytes",
		Doc:           "The largest record batch size the topic accepts, after compression.",
		Validate:      intAtLeast(0),
		BrokerDefault: func(c *Config) string { return itoa64(int64(c.Log.MaxMessageBytes)) },
	},
	{
		Name: "message.downconversion.enable", Type: TypeBoolean, BrokerSynonym: "log.message.downconversion.enable",
		Doc:           "Accepted for compatibility with Kafka 3.x tooling; Gregor never down-converts messages for old consumers.",
		Validate:      boolean,
		BrokerDefault: constant("true"),
	},
	{
		Name: "message.timestamp.after.max.ms", Type: TypeLong, BrokerSynonym: "log.message.timestamp.after.max.ms",
		Doc:           "How far in the future, relative to the broker's clock, a CreateTime message timestamp may lie before the batch is rejected.",
		Validate:      longAtLeast(0),
		BrokerDefault: constant("3600000"),
	},
	{
		Name: "message.timestamp.before.max.ms", Type: TypeLong, BrokerSynonym: "log.message.timestamp.before.max.ms",
		Doc:           "How far in the past, relative to the broker's clock, a CreateTime message timestamp may lie before the batch is rejected.",
		Validate:      longAtLeast(0),
		BrokerDefault: constant(maxLong),
	},
	{
		Name: "message.timestamp.type", Type: TypeString, BrokerSynonym: "log.message.timestamp.type",
		Doc:           "Whether a message's timestamp is the producer's (CreateTime) or the time the broker appended it (LogAppendTime).",
		Validate:      oneOf("CreateTime", "LogAppendTime"),
		BrokerDefault: func(c *Config) string { return c.Log.MessageTimestampType },
	},
	{
		Name: "min.cleanable.dirty.ratio", Type: TypeDouble, BrokerSynonym: "log.cleaner.min.cleanable.ratio",
		Doc:           "The ratio of uncompacted log to total log above which the cleaner compacts the partition.",
		Validate:      doubleBetween(0, 1),
		BrokerDefault: constant("0.5"),
	},
	{
		Name: "min.compaction.lag.ms", Type: TypeLong, BrokerSynonym: "log.cleaner.min.compaction.lag.ms",
		Doc:           "The shortest time a message stays uncompacted in the log.",
		Validate:      longAtLeast(0),
		BrokerDefault: constant("0"),
	},
	{
		Name: "min.insync.replicas", Type: TypeInt, BrokerSynonym: "min.insync.replicas",
		Doc:           "With acks=all, the fewest in-sync replicas that must acknowledge a write for it to succeed; fewer gives NOT_ENOUGH_REPLICAS.",
		Validate:      intAtLeast(1),
		BrokerDefault: func(c *Config) string { return itoa64(int64(c.Log.MinInsyncReplicas)) },
	},
	{
		Name: "preallocate", Type: TypeBoolean, BrokerSynonym: "log.preallocate",
		Doc:           "Whether a new segment file is preallocated on disk.",
		Validate:      boolean,
		BrokerDefault: constant("false"),
	},
	{
		Name: "retention.bytes", Type: TypeLong, BrokerSynonym: "log.retention.bytes",
		Doc:           "The largest size a partition may grow to before old segments are discarded under the delete policy; -1 means no size limit.",
		Validate:      anyLong,
		BrokerDefault: func(c *Config) string { return itoa64(c.Log.RetentionBytes) },
	},
	{
		Name: "retention.ms", Type: TypeLong, BrokerSynonym: "log.retention.ms",
		Doc:           "How long a segment is retained before it is discarded under the delete policy; -1 means no time limit.",
		Validate:      longAtLeast(-1),
		BrokerDefault: func(c *Config) string { return itoa64(c.Log.RetentionMs) },
	},
	{
		Name: "segment.bytes", Type: TypeInt, BrokerSynonym: "log.segment.bytes",
		Doc:           "The size of a segment file; retention and compaction work a whole segment at a time.",
		Validate:      intAtLeast(14),
		BrokerDefault: func(c *Config) string { return itoa64(c.Log.SegmentBytes) },
	},
	{
		Name: "segment.index.bytes", Type: TypeInt, BrokerSynonym: "log.index.size.max.bytes",
		Doc:           "The size of the index that maps offsets to file positions.",
		Validate:      intAtLeast(4),
		BrokerDefault: constant("10485760"),
	},
	{
		Name: "segment.ms", Type: TypeLong, BrokerSynonym: "log.roll.ms",
		Doc:           "How long the active segment may stay open before it is rolled, even if not full.",
		Validate:      longAtLeast(1),
		BrokerDefault: func(c *Config) string { return itoa64(c.Log.SegmentMs) },
	},
	{
		Name: "unclean.leader.election.enable", Type: TypeBoolean, BrokerSynonym: "unclean.leader.election.enable",
		Doc:           "Whether a replica outside the ISR may be elected leader as a last resort, at the cost of losing data.",
		Validate:      boolean,
		BrokerDefault: constant("false"),
	},
}

var topicConfigIndex = func() map[string]int {
	sort.Slice(topicConfigDefs, func(i, j int) bool { return topicConfigDefs[i].Name < topicConfigDefs[j].Name })
	m := make(map[string]int, len(topicConfigDefs))
	for i, d := range topicConfigDefs {
		if _, dup := m[d.Name]; dup {
			panic("config: duplicate topic config " + d.Name)
		}
		m[d.Name] = i
	}
	return m
}()

// TopicConfigDefs lists the supported topic configs, sorted by name. The
// slice is a copy; callers may keep it.
func TopicConfigDefs() []TopicConfigDef {
	out := make([]TopicConfigDef, len(topicConfigDefs))
	copy(out, topicConfigDefs)
	return out
}

// LookupTopicConfig finds a topic config by its Kafka name.
func LookupTopicConfig(name string) (TopicConfigDef, bool) {
	i, ok := topicConfigIndex[name]
	if !ok {
		return TopicConfigDef{}, false
	}
	return topicConfigDefs[i], true
}

// LookupBrokerSynonym finds the topic config whose broker-level name is name
// (e.g. "log.retention.ms" gives retention.ms).
func LookupBrokerSynonym(name string) (TopicConfigDef, bool) {
	for _, d := range topicConfigDefs {
		if d.BrokerSynonym == name && name != "" {
			return d, true
		}
	}
	return TopicConfigDef{}, false
}

// ValidateTopicConfigs checks every name and value in m and the constraints
// between them. The error names the offending key and wraps
// ErrUnknownTopicConfig or ErrInvalidTopicConfig. Keys are checked in sorted
// order so the reported key is deterministic.
func ValidateTopicConfigs(m map[string]string) error {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		def, ok := LookupTopicConfig(k)
		if !ok {
			return fmt.Errorf("config: topic config %q: %w", k, ErrUnknownTopicConfig)
		}
		if err := def.Validate(m[k]); err != nil {
			return fmt.Errorf("config: topic config %s: %w: %v", k, ErrInvalidTopicConfig, err)
		}
	}
	minLag, hasMin := m["min.compaction.lag.ms"]
	maxLag, hasMax := m["max.compaction.lag.ms"]
	if hasMin && hasMax {
		lo, _ := strconv.ParseInt(minLag, 10, 64)
		hi, _ := strconv.ParseInt(maxLag, 10, 64)
		if lo > hi {
			return fmt.Errorf("config: topic config min.compaction.lag.ms: %w: %d is greater than max.compaction.lag.ms %d",
				ErrInvalidTopicConfig, lo, hi)
		}
	}
	return nil
}

// TopicDefaults gives every supported topic config's broker default, the value
// a topic without an override uses.
func (c *Config) TopicDefaults() map[string]string {
	m := make(map[string]string, len(topicConfigDefs))
	for _, d := range topicConfigDefs {
		m[d.Name] = d.BrokerDefault(c)
	}
	return m
}
