package config

import (
	"errors"
	"sort"
	"strings"
	"testing"
)

func TestTopicConfigDefsSortedAndComplete(t *testing.T) {
	defs := TopicConfigDefs()
	if !sort.SliceIsSorted(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name }) {
		t.Fatal("TopicConfigDefs is not sorted by name")
	}
	want := []string{
		"cleanup.policy", "compression.type", "delete.retention.ms", "file.delete.delay.ms",
		"flush.messages", "flush.ms", "follower.replication.throttled.replicas", "gregor.interceptor.fetch", "gregor.interceptor.produce", "gregor.mirror.link", "gregor.partitioner", "gregor.partitioner.enforce",
		"gregor.retention.policy", "index.interval.bytes", "leader.replication.throttled.replicas", "max.compaction.lag.ms",
		"max.message.bytes", "message.downconversion.enable", "message.timestamp.after.max.ms",
		"message.timestamp.before.max.ms", "message.timestamp.type", "min.cleanable.dirty.ratio",
		"min.compaction.lag.ms", "min.insync.replicas", "preallocate", "retention.bytes",
		"retention.ms", "segment.bytes", "segment.index.bytes", "segment.ms",
		"unclean.leader.election.enable",
	}
	if len(defs) != len(want) {
		t.Fatalf("got %d defs, want %d", len(defs), len(want))
	}
	validTypes := map[string]bool{TypeBoolean: true, TypeString: true, TypeInt: true, TypeLong: true, TypeDouble: true, TypeList: true}
	cfg := Default()
	for i, d := range defs {
		if d.Name != want[i] {
			t.Errorf("def %d is %q, want %q", i, d.Name, want[i])
		}
		if !validTypes[d.Type] {
			t.Errorf("%s: type %q", d.Name, d.Type)
		}
		// Gregor's own topic configs and the throttled replica lists (as in
		// Kafka) have no broker-level name.
		noSynonym := strings.HasPrefix(d.Name, "gregor.") || strings.HasSuffix(d.Name, ".replication.throttled.replicas")
		if d.Doc == "" || (d.BrokerSynonym == "") != noSynonym {
			t.Errorf("%s: missing doc or broker synonym", d.Name)
		}
		// Every broker default must itself be a valid value.
		if err := d.Validate(d.BrokerDefault(&cfg)); err != nil {
			t.Errorf("%s: default %q invalid: %v", d.Name, d.BrokerDefault(&cfg), err)
		}
		if got, ok := LookupBrokerSynonym(d.BrokerSynonym); d.BrokerSynonym != "" && (!ok || got.Name != d.Name) {
			t.Errorf("LookupBrokerSynonym(%q) = %q, %v", d.BrokerSynonym, got.Name, ok)
		}
	}
	// The returned slice is a copy.
	defs[0].Name = "mutated"
	if TopicConfigDefs()[0].Name == "mutated" {
		t.Fatal("TopicConfigDefs exposes its backing array")
	}
}

func TestTopicDefaultsFollowBrokerConfig(t *testing.T) {
	cfg := Default()
	cfg.Log.RetentionMs = 1234
	cfg.Log.SegmentBytes = 4096
	cfg.Log.CleanupPolicy = "compact"
	cfg.Log.MinInsyncReplicas = 2
	cfg.Log.FlushIntervalMs = -1
	cfg.Log.MessageTimestampType = "LogAppendTime"
	d := cfg.TopicDefaults()
	tests := map[string]string{
		"retention.ms":                   "1234",
		"segment.bytes":                  "4096",
		"cleanup.policy":                 "compact",
		"min.insync.replicas":            "2",
		"flush.ms":                       "9223372036854775807",
		"message.timestamp.type":         "LogAppendTime",
		"retention.bytes":                "-1",
		"segment.ms":                     "604800000",
		"index.interval.bytes":           "4096",
		"max.message.bytes":              "1048588",
		"compression.type":               "producer",
		"delete.retention.ms":            "86400000",
		"file.delete.delay.ms":           "60000",
		"flush.messages":                 "9223372036854775807",
		"max.compaction.lag.ms":          "9223372036854775807",
		"message.timestamp.after.max.ms": "3600000",
		"min.cleanable.dirty.ratio":      "0.5",
		"min.compaction.lag.ms":          "0",
		"preallocate":                    "false",
		"segment.index.bytes":            "10485760",
		"unclean.leader.election.enable": "false",
	}
	for k, want := range tests {
		if d[k] != want {
			t.Errorf("%s = %q, want %q", k, d[k], want)
		}
	}
	if len(d) != len(TopicConfigDefs()) {
		t.Errorf("TopicDefaults has %d keys, want %d", len(d), len(TopicConfigDefs()))
	}
	cfg.Log.FlushIntervalMs = 500
	if got := cfg.TopicDefaults()["flush.ms"]; got != "500" {
		t.Errorf("flush.ms = %q, want 500", got)
	}
	cfg.Log.FlushIntervalMessages = 7
	if got := cfg.TopicDefaults()["flush.messages"]; got != "7" {
		t.Errorf("flush.messages = %q, want 7", got)
	}
	cfg.Log.FlushIntervalMessages = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "log.flush_interval_messages") {
		t.Errorf("flush_interval_messages = 0: %v", err)
	}
	cfg.Log.FlushIntervalMessages, cfg.Log.FlushSchedulerIntervalMs = -1, 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "log.flush_scheduler_interval_ms") {
		t.Errorf("flush_scheduler_interval_ms = 0: %v", err)
	}
}

func TestValidateTopicConfigs(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string]string
		wantErr error  // nil means valid
		wantKey string // the key the error must name
	}{
		{"empty", map[string]string{}, nil, ""},
		{"typical", map[string]string{"retention.ms": "-1", "cleanup.policy": "compact,delete", "segment.bytes": "1048576"}, nil, ""},
		{"bool any case", map[string]string{"preallocate": "TRUE", "unclean.leader.election.enable": "false"}, nil, ""},
		{"ratio bounds", map[string]string{"min.cleanable.dirty.ratio": "1"}, nil, ""},
		{"retention.bytes any long", map[string]string{"retention.bytes": "-5"}, nil, ""},
		{"mirror link", map[string]string{"gregor.mirror.link": "east"}, nil, ""},
		{"no mirror link", map[string]string{"gregor.mirror.link": ""}, nil, ""},
		{"mirror link with a space", map[string]string{"gregor.mirror.link": "east 1"}, ErrInvalidTopicConfig, "gregor.mirror.link"},
		{"unknown", map[string]string{"retention.msx": "1"}, ErrUnknownTopicConfig, "retention.msx"},
		{"not a number", map[string]string{"retention.ms": "soon"}, ErrInvalidTopicConfig, "retention.ms"},
		{"below range", map[string]string{"retention.ms": "-2"}, ErrInvalidTopicConfig, "retention.ms"},
		{"int overflow", map[string]string{"segment.bytes": "4294967296"}, ErrInvalidTopicConfig, "segment.bytes"},
		{"segment too small", map[string]string{"segment.bytes": "13"}, ErrInvalidTopicConfig, "segment.bytes"},
		{"flush.messages zero", map[string]string{"flush.messages": "0"}, ErrInvalidTopicConfig, "flush.messages"},
		{"min isr zero", map[string]string{"min.insync.replicas": "0"}, ErrInvalidTopicConfig, "min.insync.replicas"},
		{"bad policy", map[string]string{"cleanup.policy": "delete,shred"}, ErrInvalidTopicConfig, "cleanup.policy"},
		{"empty policy", map[string]string{"cleanup.policy": ""}, ErrInvalidTopicConfig, "cleanup.policy"},
		{"bad compression", map[string]string{"compression.type": "brotli"}, ErrInvalidTopicConfig, "compression.type"},
		{"compression case", map[string]string{"compression.type": "ZSTD"}, ErrInvalidTopicConfig, "compression.type"},
		{"bad timestamp type", map[string]string{"message.timestamp.type": "createtime"}, ErrInvalidTopicConfig, "message.timestamp.type"},
		{"ratio above 1", map[string]string{"min.cleanable.dirty.ratio": "1.5"}, ErrInvalidTopicConfig, "min.cleanable.dirty.ratio"},
		{"ratio NaN", map[string]string{"min.cleanable.dirty.ratio": "NaN"}, ErrInvalidTopicConfig, "min.cleanable.dirty.ratio"},
		{"bad bool", map[string]string{"preallocate": "yes"}, ErrInvalidTopicConfig, "preallocate"},
		{"whitespace number", map[string]string{"retention.ms": " 5"}, ErrInvalidTopicConfig, "retention.ms"},
		{"lag order", map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, ErrInvalidTopicConfig, "min.compaction.lag.ms"},
		{"lag equal ok", map[string]string{"min.compaction.lag.ms": "5", "max.compaction.lag.ms": "5"}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateTopicConfigs(tc.in)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantKey) || !strings.HasPrefix(err.Error(), "config: ") {
				t.Fatalf("error %q does not name %q with the package prefix", err, tc.wantKey)
			}
		})
	}
}

func TestLookupTopicConfig(t *testing.T) {
	d, ok := LookupTopicConfig("retention.ms")
	if !ok || d.Type != TypeLong || d.BrokerSynonym != "log.retention.ms" {
		t.Fatalf("retention.ms: %+v %v", d, ok)
	}
	if _, ok := LookupTopicConfig("log.retention.ms"); ok {
		t.Fatal("broker name found as a topic config")
	}
}
