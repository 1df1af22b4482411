package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestExtensionsDecode(t *testing.T) {
	cfg, err := Parse(`
[security]
authorizer = "payments-writers"

[extensions.region]
kind = "partitioner"
wasm = "./region.wasm"
timeout_ms = 5
memory_limit_pages = 16

[extensions.keep-for-billing]
kind = "retention"
exec = "./bin/plugin-retention-groups"
args = ["--quiet"]
[extensions.keep-for-billing.config]
groups = ["billing", "audit"]
max_age_ms = 2592000000

[extensions.payments-writers]
kind = "authorizer"
exec = "./bin/plugin-authorizer-prefix"
cache_ttl_ms = -1
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Extensions) != 3 {
		t.Fatalf("extensions %v", cfg.Extensions)
	}
	r := cfg.Extensions["keep-for-billing"]
	if r.Kind != KindRetention || r.Exec != "./bin/plugin-retention-groups" || !reflect.DeepEqual(r.Args, []string{"--quiet"}) {
		t.Fatalf("keep-for-billing %+v", r)
	}
	if !reflect.DeepEqual(r.Config["groups"], []any{"billing", "audit"}) || r.Config["max_age_ms"] != int64(2592000000) {
		t.Fatalf("config table %#v", r.Config)
	}
	if p := cfg.Extensions["region"]; p.WASM != "./region.wasm" || p.TimeoutMs != 5 || p.MemoryLimitPages != 16 {
		t.Fatalf("region %+v", p)
	}
	for name, want := range map[string]string{"region": FallbackBuiltin, "keep-for-billing": FallbackBuiltin, "payments-writers": FallbackReject} {
		if got := cfg.Extensions[name].EffectiveFallback(); got != want {
			t.Errorf("%s: fallback %q, want %q", name, got, want)
		}
	}
}

func TestExtensionsInvalid(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"unknown key", "[extensions.p]\nkind = \"partitioner\"\nwasm = \"p.wasm\"\ncolour = 1\n", "unknown key extensions.p.colour"},
		{"no kind", "[extensions.p]\nwasm = \"p.wasm\"\n", "invalid extensions.p.kind: missing"},
		{"bad kind", "[extensions.p]\nkind = \"router\"\nwasm = \"p.wasm\"\n", `invalid extensions.p.kind: "router" is not`},
		{"no path", "[extensions.p]\nkind = \"partitioner\"\n", "invalid extensions.p: needs wasm = PATH or exec = PATH"},
		{"both paths", "[extensions.p]\nkind = \"partitioner\"\nwasm = \"a\"\nexec = \"b\"\n", "sets both wasm and exec"},
		{"args for wasm", "[extensions.p]\nkind = \"partitioner\"\nwasm = \"a\"\nargs = [\"x\"]\n", "invalid extensions.p.args: only for exec"},
		{"wasm authenticator", "[extensions.p]\nkind = \"authenticator\"\nwasm = \"a\"\n", "runs as a plugin"},
		{"bad fallback", "[extensions.p]\nkind = \"partitioner\"\nwasm = \"a\"\nfallback = \"ignore\"\n", `invalid extensions.p.fallback: "ignore" is not`},
		{"builtin authorizer", "[extensions.p]\nkind = \"authorizer\"\nexec = \"a\"\nfallback = \"builtin\"\n", "has no built-in fallback"},
		{"negative timeout", "[extensions.p]\nkind = \"partitioner\"\nexec = \"a\"\ntimeout_ms = -1\n", "invalid extensions.p.timeout_ms"},
		{"memory for exec", "[extensions.p]\nkind = \"partitioner\"\nexec = \"a\"\nmemory_limit_pages = 2\n", "memory_limit_pages: only for wasm"},
		{"cache for partitioner", "[extensions.p]\nkind = \"partitioner\"\nexec = \"a\"\ncache_ttl_ms = 5\n", "cache_ttl_ms: only for an authorizer"},
		{"trusted plugin", "[extensions.p]\nkind = \"partitioner\"\nexec = \"a\"\ntrusted = true\n", "trusted: only for wasm"},
		{"trusted with a timeout", "[extensions.p]\nkind = \"partitioner\"\nwasm = \"a\"\ntrusted = true\ntimeout_ms = 5\n", "a trusted module has no time limit"},
		{"bad on_error", "[extensions.i]\nkind = \"interceptor\"\nwasm = \"a\"\non_error = \"drop\"\n", `invalid extensions.i.on_error: "drop" is not "reject" or "accept"`},
		{"on_error for partitioner", "[extensions.p]\nkind = \"partitioner\"\nwasm = \"a\"\non_error = \"accept\"\n", "on_error: only for an interceptor"},
		{"fallback for interceptor", "[extensions.i]\nkind = \"interceptor\"\nwasm = \"a\"\nfallback = \"builtin\"\n", "an interceptor's failure policy is on_error"},
		{"bad name", "[extensions.\"a b\"]\nkind = \"partitioner\"\nexec = \"a\"\n", "the name must be"},
		{"builtin name", "[extensions.murmur2]\nkind = \"partitioner\"\nexec = \"a\"\n", "name of a built-in"},
		{"undeclared authorizer", "[security]\nauthorizer = \"opa\"\n", `"opa" is not none, acl or a declared extension`},
		{"authorizer of another kind", "[security]\nauthorizer = \"p\"\n[extensions.p]\nkind = \"partitioner\"\nexec = \"a\"\n", "is a partitioner, not an authorizer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.toml)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestExtensionFor(t *testing.T) {
	cfg := Default()
	cfg.Extensions = map[string]Extension{
		"region": {Kind: KindPartitioner, WASM: "r.wasm"},
		"keep":   {Kind: KindRetention, Exec: "k"},
	}
	tests := []struct {
		key, value, kind, builtin string
		wantName, wantErr         string
	}{
		{"gregor.partitioner", "", KindPartitioner, BuiltinPartitioner, "", ""},
		{"gregor.partitioner", "murmur2", KindPartitioner, BuiltinPartitioner, "", ""},
		{"gregor.partitioner", "region", KindPartitioner, BuiltinPartitioner, "region", ""},
		{"gregor.partitioner", "keep", KindPartitioner, BuiltinPartitioner, "", "the extension is a retention, not a partitioner"},
		{"gregor.partitioner", "nope", KindPartitioner, BuiltinPartitioner, "", "gregor.partitioner=nope: no such extension in broker.toml (declared: region)"},
		{"gregor.retention.policy", "keep", KindRetention, BuiltinRetention, "keep", ""},
		{"gregor.retention.policy", "time_size", KindRetention, BuiltinRetention, "", ""},
	}
	for _, tt := range tests {
		name, _, ok, err := cfg.ExtensionFor(tt.key, tt.value, tt.kind, tt.builtin)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s=%s: err %v, want %q", tt.key, tt.value, err, tt.wantErr)
			}
			continue
		}
		if err != nil || name != tt.wantName || ok != (tt.wantName != "") {
			t.Errorf("%s=%s: %q %v %v, want %q", tt.key, tt.value, name, ok, err, tt.wantName)
		}
	}
}

func TestGregorTopicConfigs(t *testing.T) {
	tests := []struct {
		m   map[string]string
		err string
	}{
		{map[string]string{"gregor.partitioner": "region", "gregor.partitioner.enforce": "true", "gregor.retention.policy": "keep-for-billing"}, ""},
		{map[string]string{"gregor.partitioner": "a b"}, "not an extension name"},
		{map[string]string{"gregor.partitioner.enforce": "yes"}, "not true or false"},
	}
	for _, tt := range tests {
		err := ValidateTopicConfigs(tt.m)
		if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%v: err %v, want %q", tt.m, err, tt.err)
		}
	}
}
