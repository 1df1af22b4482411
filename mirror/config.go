package mirror

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// Modes of a mirror.
const (
	// ModeCopy re-produces records through an ordinary producer; any Kafka
	// cluster can be the target. Target offsets differ from source offsets
	// and are translated through offset syncs.
	ModeCopy = "copy"
	// ModeLink copies record batches byte for byte so that target offsets,
	// timestamps and producer ids equal the source's. The target must be
	// written by the mirror alone.
	ModeLink = "link"
)

// Rename policies for target topic names.
const (
	RenamePrefix   = "prefix"   // "orders" from east becomes "east.orders"
	RenameIdentity = "identity" // the name is kept
)

// What a partition does when the source deleted records it had not mirrored.
const (
	GapStop = "stop" // the partition stops and reports; nothing is skipped
	GapSkip = "skip" // the partition continues at the log start, counting the lost records
)

// What a partition does with a source record larger than the target topic
// accepts (its max.message.bytes): it can never be written as it is.
const (
	TooLargeStop = "stop" // the partition goes to the failing state at the record
	TooLargeSkip = "skip" // the record is left out, counted and logged; the partition goes on
)

// Config is a whole mirror.toml (or one [mirror.NAME] section of
// broker.toml). Key names are fixed: tools and operators rely on them.
type Config struct {
	Source Cluster `toml:"source"`
	Target Cluster `toml:"target"`
	Topics Topics  `toml:"topics"`
	Groups Groups  `toml:"groups"`
	Mirror Options `toml:"mirror"`
}

// Cluster is one side of the mirror.
type Cluster struct {
	// Name is the cluster's alias; the prefix rename policy and the
	// internal topic names use it.
	Name string `toml:"name"`
	// Bootstrap lists host:port seeds.
	Bootstrap []string `toml:"bootstrap"`
	// SecurityProtocol is PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.
	SecurityProtocol string `toml:"security_protocol"`
	// SASLMechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	SASLMechanism string `toml:"sasl_mechanism"`
	SASLUsername  string `toml:"sasl_username"`
	SASLPassword  string `toml:"sasl_password"`
	// TLS files in PEM: the CA that signs the brokers' certificates, and a
	// client certificate and key for mutual TLS.
	TLSCAFile   string `toml:"tls_ca_file"`
	TLSCertFile string `toml:"tls_cert_file"`
	TLSKeyFile  string `toml:"tls_key_file"`
	// TLSServerName overrides the name checked in the brokers' certificates.
	TLSServerName string `toml:"tls_server_name"`
	// TLSInsecureSkipVerify disables certificate checks; for tests only.
	TLSInsecureSkipVerify bool `toml:"tls_insecure_skip_verify"`
}

// Topics selects and names the mirrored topics.
type Topics struct {
	// Include and Exclude are regular expressions matched against whole
	// source topic names; a topic is mirrored when it matches an include
	// and no exclude.
	Include []string `toml:"include"`
	Exclude []string `toml:"exclude"`
	// Rename is "prefix" or "identity".
	Rename string `toml:"rename"`
	// Separator joins the source name and the topic name in prefix mode.
	Separator string `toml:"separator"`
	// SyncConfigs copies topic configs to the target periodically; an
	// override deleted on the source is deleted on the target.
	SyncConfigs bool `toml:"sync_configs"`
	// SyncACLs copies literal and prefixed topic ACLs, ALLOW and DENY
	// (never WRITE, nor a DENY of the mirror's own principal), to the
	// target periodically, renamed like their topics, and deletes on the
	// target the ones it created that the source no longer has (recorded
	// in <source>.acls.internal; ACLs others created are never deleted).
	SyncACLs bool `toml:"sync_acls"`
	// ReplicationFactor of the topics the mirror creates; -1 is the
	// target's default.
	ReplicationFactor int16 `toml:"replication_factor"`
	// SyncDeletions deletes a target topic the mirror created when its
	// source topic is deleted (not when it stops matching the include and
	// exclude patterns, and never a promoted topic). Off by default: a
	// deletion on the source then leaves the target's copy in place.
	SyncDeletions bool `toml:"sync_deletions"`
	// GrowPartitions adds partitions to an existing target topic that has
	// fewer than its source (the default). When false, or when the target
	// has more, copy mode places each record with the default partitioner
	// (murmur2 of the key) instead, and group offsets of the topic are not
	// translated; link mode refuses such a topic.
	GrowPartitions bool `toml:"grow_partitions"`
}

// Groups selects the consumer groups whose offsets are checkpointed.
type Groups struct {
	Include []string `toml:"include"`
	Exclude []string `toml:"exclude"`
	// SyncOffsets writes translated offsets into target groups that have no
	// members, never moving a group backwards.
	SyncOffsets bool `toml:"sync_offsets"`
}

// Options holds the mirror's own settings ([mirror]).
type Options struct {
	// Mode is "copy" or "link".
	Mode string `toml:"mode"`
	// RefreshIntervalMs is how often topics, partitions, configs and ACLs
	// are discovered and synced.
	RefreshIntervalMs int64 `toml:"refresh_interval_ms"`
	// CheckpointIntervalMs is how often group offsets are checkpointed and
	// synced.
	CheckpointIntervalMs int64 `toml:"checkpoint_interval_ms"`
	// HeartbeatIntervalMs is how often a heartbeat is written; 0 disables.
	HeartbeatIntervalMs int64 `toml:"heartbeat_interval_ms"`
	// OnSourceGap is "stop" or "skip": what a partition does when source
	// retention deleted records before they were mirrored. Either way the
	// gap is reported.
	OnSourceGap string `toml:"on_source_gap"`
	// OnRecordTooLarge is "stop" or "skip": what copy mode does with a
	// source record larger than the target topic's max.message.bytes.
	// Either way it is counted and reported, never retried as it is.
	OnRecordTooLarge string `toml:"on_record_too_large"`
	// MaxFetchBytes bounds one source fetch per partition. Batches written
	// to the target are bounded by the target's limits instead (the
	// topic's max.message.bytes, else the broker's message.max.bytes).
	MaxFetchBytes int32 `toml:"max_fetch_bytes"`
	// BufferMemory (link mode) bounds, across all partitions, the bytes of
	// record batches fetched from the source and not yet acknowledged by
	// the target, fetches in flight counted at their maximum size (the
	// role of Kafka's producer buffer.memory). Each partition's fetch gets
	// a share of it, at most max_fetch_bytes, at least 64 KiB; a
	// partition reads ahead while it writes only when the budget has
	// room. A source batch larger than its fetch's share still comes
	// whole (as with Kafka's fetch.max.bytes) and makes the next fetches
	// wait until the budget is below its bound again.
	BufferMemory int64 `toml:"buffer_memory"`
	// TargetConnectionsPerBroker bounds the connections that write to
	// each target broker: link mode's partitions share this many target
	// clients (a partition always writes through the same one), copy mode
	// writes through this many producers. A broker answers one
	// connection's acks=all writes in order, so more connections let
	// more partitions' writes wait for their fsyncs at once.
	TargetConnectionsPerBroker int `toml:"target_connections_per_broker"`
	// LingerMs (copy mode, Kafka's producer linger.ms) bounds how long
	// records gather while their target producer waits for an answer to
	// what it sent before. A producer with nothing outstanding sends at
	// once: records never wait for the linger when the target keeps up.
	LingerMs int64 `toml:"linger_ms"`
	// ExactlyOnce (copy mode) writes records and their offset syncs in
	// target transactions, so that read_committed consumers of the target
	// never see a record twice, even after a crash. The target must
	// support transactions; the default is idempotent writes with resume
	// by reconciliation.
	ExactlyOnce bool `toml:"exactly_once"`
}

// Default is a mirror with no clusters, all topics but internal ones, all
// groups, in copy mode.
func Default() Config {
	return Config{
		Topics: Topics{
			Include:           []string{".*"},
			Rename:            RenamePrefix,
			Separator:         ".",
			GrowPartitions:    true,
			SyncConfigs:       true,
			SyncACLs:          true,
			ReplicationFactor: -1,
		},
		Groups: Groups{Include: []string{".*"}, SyncOffsets: true},
		Mirror: Options{
			Mode:                 ModeCopy,
			RefreshIntervalMs:    30000,
			CheckpointIntervalMs: 5000,
			HeartbeatIntervalMs:  1000,
			OnSourceGap:          GapStop,
			OnRecordTooLarge:     TooLargeStop,
			MaxFetchBytes:        4 << 20,
			BufferMemory:         32 << 20,

			TargetConnectionsPerBroker: 4,
			LingerMs:                   5,
		},
	}
}

// Load reads a mirror.toml over Default.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("mirror: config: %w", err)
	}
	return Parse(string(data))
}

// Parse decodes TOML over Default strictly (an unknown key is an error
// naming it) and validates the result.
func Parse(text string) (Config, error) {
	cfg := Default()
	md, err := toml.Decode(text, &cfg)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return Config{}, fmt.Errorf("mirror: config: %s", perr.ErrorWithPosition())
		}
		return Config{}, fmt.Errorf("mirror: config: %w", err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		keys := make([]string, len(undec))
		for i, k := range undec {
			keys[i] = k.String()
		}
		return Config{}, fmt.Errorf("mirror: config: unknown key %s", strings.Join(keys, ", "))
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// FromTable decodes one [mirror.NAME] table of broker.toml, as the broker's
// configuration decoder hands it over, with Parse's strictness. Errors name
// keys relative to prefix ("mirror.dr.topics.rename").
func FromTable(prefix string, table map[string]any) (Config, error) {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(table); err != nil {
		return Config{}, fmt.Errorf("mirror: config %s: %w", prefix, err)
	}
	cfg, err := Parse(buf.String())
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "mirror: config: ")
		msg = strings.Replace(msg, "unknown key ", "unknown key "+prefix+".", 1)
		msg = strings.Replace(msg, "invalid ", "invalid "+prefix+".", 1)
		return Config{}, fmt.Errorf("mirror: config: %s", msg)
	}
	return cfg, nil
}

// Validate reports the first invalid setting, naming its key.
func (c *Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("mirror: config: invalid %s: %s", key, fmt.Sprintf(format, args...))
	}
	if err := c.Source.validate("source", bad); err != nil {
		return err
	}
	if err := c.Target.validate("target", bad); err != nil {
		return err
	}
	if c.Source.Name == c.Target.Name {
		return bad("target.name", "%q is also the source's name", c.Target.Name)
	}
	if err := checkRegexps("topics.include", c.Topics.Include, bad); err != nil {
		return err
	}
	if err := checkRegexps("topics.exclude", c.Topics.Exclude, bad); err != nil {
		return err
	}
	if c.Topics.Rename != RenamePrefix && c.Topics.Rename != RenameIdentity {
		return bad("topics.rename", "%q is not %q or %q", c.Topics.Rename, RenamePrefix, RenameIdentity)
	}
	if c.Topics.Rename == RenamePrefix && c.Topics.Separator == "" {
		return bad("topics.separator", "must not be empty with rename = %q", RenamePrefix)
	}
	if c.Topics.ReplicationFactor == 0 || c.Topics.ReplicationFactor < -1 {
		return bad("topics.replication_factor", "%d must be -1 or positive", c.Topics.ReplicationFactor)
	}
	if err := checkRegexps("groups.include", c.Groups.Include, bad); err != nil {
		return err
	}
	if err := checkRegexps("groups.exclude", c.Groups.Exclude, bad); err != nil {
		return err
	}
	m := c.Mirror
	switch {
	case m.Mode != ModeCopy && m.Mode != ModeLink:
		return bad("mirror.mode", "%q is not %q or %q", m.Mode, ModeCopy, ModeLink)
	case m.RefreshIntervalMs < 1:
		return bad("mirror.refresh_interval_ms", "%d is below 1", m.RefreshIntervalMs)
	case m.CheckpointIntervalMs < 1:
		return bad("mirror.checkpoint_interval_ms", "%d is below 1", m.CheckpointIntervalMs)
	case m.HeartbeatIntervalMs < 0:
		return bad("mirror.heartbeat_interval_ms", "%d is negative", m.HeartbeatIntervalMs)
	case m.OnSourceGap != GapStop && m.OnSourceGap != GapSkip:
		return bad("mirror.on_source_gap", "%q is not %q or %q", m.OnSourceGap, GapStop, GapSkip)
	case m.OnRecordTooLarge != TooLargeStop && m.OnRecordTooLarge != TooLargeSkip:
		return bad("mirror.on_record_too_large", "%q is not %q or %q", m.OnRecordTooLarge, TooLargeStop, TooLargeSkip)
	case m.MaxFetchBytes < 1024 || m.MaxFetchBytes > 256<<20:
		return bad("mirror.max_fetch_bytes", "%d is not in [1024, %d]", m.MaxFetchBytes, 256<<20)
	case m.BufferMemory < 1<<20:
		return bad("mirror.buffer_memory", "%d is below %d", m.BufferMemory, 1<<20)
	case m.TargetConnectionsPerBroker < 1 || m.TargetConnectionsPerBroker > 64:
		return bad("mirror.target_connections_per_broker", "%d is not in [1, 64]", m.TargetConnectionsPerBroker)
	case m.LingerMs < 0 || m.LingerMs > 60000:
		return bad("mirror.linger_ms", "%d is not in [0, 60000]", m.LingerMs)
	case m.ExactlyOnce && m.Mode != ModeCopy:
		return bad("mirror.exactly_once", "is for copy mode (a link copies batches as they are)")
	}
	return nil
}

func (c *Cluster) validate(key string, bad func(key, format string, args ...any) error) error {
	if c.Name == "" {
		return bad(key+".name", "must not be empty")
	}
	if strings.ContainsAny(c.Name, " \t./\\") {
		return bad(key+".name", "%q may not hold spaces, dots or slashes", c.Name)
	}
	if len(c.Bootstrap) == 0 {
		return bad(key+".bootstrap", "at least one host:port is needed")
	}
	for _, b := range c.Bootstrap {
		if !strings.Contains(b, ":") {
			return bad(key+".bootstrap", "%q is not host:port", b)
		}
	}
	switch c.SecurityProtocol {
	case "", "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
	default:
		return bad(key+".security_protocol", "%q is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", c.SecurityProtocol)
	}
	sasl := strings.HasPrefix(c.SecurityProtocol, "SASL_")
	switch {
	case sasl && c.SASLMechanism != "PLAIN" && c.SASLMechanism != "SCRAM-SHA-256" && c.SASLMechanism != "SCRAM-SHA-512":
		return bad(key+".sasl_mechanism", "%q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.SASLMechanism)
	case !sasl && c.SASLMechanism != "":
		return bad(key+".sasl_mechanism", "set, but security_protocol %q has no SASL", c.SecurityProtocol)
	case sasl && c.SASLUsername == "":
		return bad(key+".sasl_username", "must not be empty with SASL")
	case (c.TLSCertFile == "") != (c.TLSKeyFile == ""):
		return bad(key+".tls_cert_file", "tls_cert_file and tls_key_file go together")
	}
	return nil
}

func checkRegexps(key string, exprs []string, bad func(key, format string, args ...any) error) error {
	for _, e := range exprs {
		if _, err := regexp.Compile("^(?:" + e + ")$"); err != nil {
			return bad(key, "%q: %v", e, err)
		}
	}
	return nil
}

// usesTLS reports whether the cluster's protocol runs over TLS.
func (c *Cluster) usesTLS() bool {
	return c.SecurityProtocol == "SSL" || c.SecurityProtocol == "SASL_SSL"
}
