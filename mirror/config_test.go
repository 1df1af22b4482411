package mirror

import (
	"strings"
	"testing"
)

const minimal = `
[source]
name = "east"
bootstrap = ["127.0.0.1:9092"]
[target]
name = "west"
bootstrap = ["127.0.0.1:9192"]
`

func TestParse(t *testing.T) {
	cfg, err := Parse(minimal + `
[topics]
include = ["orders.*"]
exclude = []
rename = "prefix"
[groups]
include = [".*"]
sync_offsets = true
[mirror]
mode = "copy"
`)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Source.Name != "east" || cfg.Target.Bootstrap[0] != "127.0.0.1:9192" || cfg.Topics.Include[0] != "orders.*" ||
		cfg.Mirror.Mode != ModeCopy || !cfg.Groups.SyncOffsets || cfg.Mirror.OnSourceGap != GapStop {
		t.Fatalf("unexpected config %+v", cfg)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"unknown key", minimal + "[topics]\nrenam = \"prefix\"\n", "unknown key topics.renam"},
		{"unknown section", minimal + "[mirrors]\nmode = \"copy\"\n", "unknown key mirrors"},
		{"bad mode", minimal + "[mirror]\nmode = \"sync\"\n", "invalid mirror.mode"},
		{"bad rename", minimal + "[topics]\nrename = \"suffix\"\n", "invalid topics.rename"},
		{"bad regexp", minimal + "[topics]\ninclude = [\"(\"]\n", "invalid topics.include"},
		{"bad group regexp", minimal + "[groups]\nexclude = [\"[\"]\n", "invalid groups.exclude"},
		{"no source", "[target]\nname = \"w\"\nbootstrap = [\"a:1\"]\n", "invalid source.name"},
		{"same names", strings.Replace(minimal, `"west"`, `"east"`, 1), "invalid target.name"},
		{"dotted name", strings.Replace(minimal, `"east"`, `"ea.st"`, 1), "invalid source.name"},
		{"no bootstrap", "[source]\nname = \"e\"\n[target]\nname = \"w\"\nbootstrap = [\"a:1\"]\n", "invalid source.bootstrap"},
		{"bad gap policy", minimal + "[mirror]\non_source_gap = \"ignore\"\n", "invalid mirror.on_source_gap"},
		{"bad fetch size", minimal + "[mirror]\nmax_fetch_bytes = 10\n", "invalid mirror.max_fetch_bytes"},
		{"small buffer memory", minimal + "[mirror]\nbuffer_memory = 1000\n", "invalid mirror.buffer_memory"},
		{"no target connections", minimal + "[mirror]\ntarget_connections_per_broker = 0\n", "invalid mirror.target_connections_per_broker"},
		{"negative linger", minimal + "[mirror]\nlinger_ms = -1\n", "invalid mirror.linger_ms"},
		{"exactly once in link mode", minimal + "[mirror]\nmode = \"link\"\nexactly_once = true\n", "invalid mirror.exactly_once"},
		{"syntax", minimal + "[mirror\n", "mirror: config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestClusterSecurityValidation(t *testing.T) {
	tests := []struct {
		name string
		c    Cluster
		want string
	}{
		{"plain ok", Cluster{Name: "a", Bootstrap: []string{"h:1"}}, ""},
		{"sasl needs mechanism", Cluster{Name: "a", Bootstrap: []string{"h:1"}, SecurityProtocol: "SASL_SSL"}, "sasl_mechanism"},
		{"sasl needs user", Cluster{Name: "a", Bootstrap: []string{"h:1"}, SecurityProtocol: "SASL_PLAINTEXT", SASLMechanism: "PLAIN"}, "sasl_username"},
		{"sasl ok", Cluster{Name: "a", Bootstrap: []string{"h:1"}, SecurityProtocol: "SASL_PLAINTEXT", SASLMechanism: "SCRAM-SHA-512", SASLUsername: "u"}, ""},
		{"mechanism without sasl", Cluster{Name: "a", Bootstrap: []string{"h:1"}, SASLMechanism: "PLAIN"}, "sasl_mechanism"},
		{"bad protocol", Cluster{Name: "a", Bootstrap: []string{"h:1"}, SecurityProtocol: "TLS"}, "security_protocol"},
		{"cert without key", Cluster{Name: "a", Bootstrap: []string{"h:1"}, SecurityProtocol: "SSL", TLSCertFile: "c.pem"}, "tls_cert_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			cfg.Source = tt.c
			cfg.Target = Cluster{Name: "z", Bootstrap: []string{"h:2"}}
			err := cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestFromTable(t *testing.T) {
	table := map[string]any{
		"source": map[string]any{"name": "east", "bootstrap": []any{"127.0.0.1:9092"}},
		"target": map[string]any{"name": "west", "bootstrap": []any{"127.0.0.1:9192"}},
		"mirror": map[string]any{"mode": "link", "refresh_interval_ms": int64(1000)},
	}
	cfg, err := FromTable("mirror.dr", table)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mirror.Mode != ModeLink || cfg.Mirror.RefreshIntervalMs != 1000 {
		t.Fatalf("cfg = %+v", cfg.Mirror)
	}
	table["topics"] = map[string]any{"renam": "x"}
	if _, err := FromTable("mirror.dr", table); err == nil || !strings.Contains(err.Error(), "unknown key mirror.dr.topics.renam") {
		t.Fatalf("err = %v", err)
	}
	delete(table, "topics")
	table["mirror"] = map[string]any{"mode": "nope"}
	if _, err := FromTable("mirror.dr", table); err == nil || !strings.Contains(err.Error(), "invalid mirror.dr.mirror.mode") {
		t.Fatalf("err = %v", err)
	}
}
