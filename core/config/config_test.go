package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// The shipped broker.toml spells out the defaults; both must agree.
func TestShippedBrokerTomlIsDefault(t *testing.T) {
	cfg, err := Load("../../broker.toml")
	if err != nil {
		t.Fatal(err)
	}
	if want := Default(); !reflect.DeepEqual(cfg, want) {
		t.Fatalf("broker.toml differs from Default():\n got %+v\nwant %+v", cfg, want)
	}
}

func TestParseErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		name, toml, want string
	}{
		{"unknown top-level key", "nodeid = 1", "unknown key nodeid"},
		{"unknown nested key", "[log]\nsegment_size = 5", "unknown key log.segment_size"},
		{"unknown section", "[storage]\nx = 1", "unknown key storage"},
		{"wrong type", "[log]\nsegment_bytes = \"big\"", "segment_bytes"},
		{"negative retention", "[log]\nretention_ms = -5", "log.retention_ms"},
		{"bad listener", "[listeners]\nkafka = \"nope\"", "listeners.kafka"},
		{"bad durability", "[log]\ndurability = \"sometimes\"", "log.durability"},
		{"zero partitions", "[topics]\ndefault_partitions = 0", "topics.default_partitions"},
		{"segment too large", "[log]\nsegment_bytes = 4294967296", "log.segment_bytes"},
		{"bad timestamp type", "[log]\nmessage_timestamp_type = \"Now\"", "log.message_timestamp_type"},
		{"bad cleanup policy", "[log]\ncleanup_policy = \"shred\"", "log.cleanup_policy"},
		{"syntax error", "node_id = = 1", "config:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.toml)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestParseOverridesDefaults(t *testing.T) {
	cfg, err := Parse("node_id = 7\ndata_dir = \"/var/lib/gregor\"\n[log]\nretention_ms = -1\ndurability = \"page_cache\"\n[topics]\nauto_create = false")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NodeID != 7 || cfg.DataDir != "/var/lib/gregor" || cfg.Log.RetentionMs != -1 ||
		cfg.Log.Durability != DurabilityPageCache || cfg.Topics.AutoCreate {
		t.Fatalf("overrides not applied: %+v", cfg)
	}
	if cfg.Log.SegmentBytes != Default().Log.SegmentBytes {
		t.Fatal("unset key lost its default")
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(t.TempDir() + "/none.toml"); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Fatalf("err = %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestClusterConfig(t *testing.T) {
	for _, tc := range []struct {
		name, toml, wantErr string
		voter               bool
	}{
		{"three voters", "node_id = 2\n[listeners]\ncontroller = \"127.0.0.1:9193\"\n[cluster]\nvoters = [\"1@127.0.0.1:9093\", \"2@127.0.0.1:9193\", \"3@127.0.0.1:9293\"]", "", true},
		{"broker only", "node_id = 4\nrack = \"r1\"\n[listeners]\ncontroller = \"127.0.0.1:9393\"\n[cluster]\nvoters = [\"1@127.0.0.1:9093\"]", "", false},
		{"voters without controller listener", "[cluster]\nvoters = [\"1@127.0.0.1:9093\"]", "listeners.controller", false},
		{"voter without id", "[listeners]\ncontroller = \"127.0.0.1:9093\"\n[cluster]\nvoters = [\"127.0.0.1:9093\"]", "cluster.voters", false},
		{"voter with bad id", "[listeners]\ncontroller = \"127.0.0.1:9093\"\n[cluster]\nvoters = [\"x@127.0.0.1:9093\"]", "cluster.voters", false},
		{"voter with bad port", "[listeners]\ncontroller = \"127.0.0.1:9093\"\n[cluster]\nvoters = [\"1@127.0.0.1:0\"]", "cluster.voters", false},
		{"voter twice", "[listeners]\ncontroller = \"127.0.0.1:9093\"\n[cluster]\nvoters = [\"1@a:1\", \"1@b:2\"]", "listed twice", false},
		{"heartbeat above session", "[cluster]\nbroker_session_timeout_ms = 1000\nbroker_heartbeat_interval_ms = 1000", "cluster.broker_heartbeat_interval_ms", false},
		{"zero session", "[cluster]\nbroker_session_timeout_ms = 0", "cluster.broker_session_timeout_ms", false},
		{"election timeout too short", "[cluster]\nquorum_election_timeout_ms = 5", "cluster.quorum_election_timeout_ms", false},
		{"unknown cluster key", "[cluster]\nvoter = []", "unknown key cluster.voter", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse(tc.toml)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !cfg.MultiNode() || cfg.IsVoter() != tc.voter {
				t.Fatalf("multi-node %v voter %v, want true %v", cfg.MultiNode(), cfg.IsVoter(), tc.voter)
			}
		})
	}
	if d := Default(); d.MultiNode() || d.IsVoter() {
		t.Fatal("the default is a multi-node config")
	}
}
