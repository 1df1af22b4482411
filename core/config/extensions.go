package config

import (
	"fmt"
	"sort"
	"strings"
)

// Extension is one [extensions.NAME] table: a partitioner, retention policy,
// authenticator, authorizer or interceptor run as a WebAssembly module (wasm) or as a
// go-plugin process (exec). Topics pick partitioners and retention policies
// by NAME with the topic configs gregor.partitioner and
// gregor.retention.policy; security.authorizer and security.sasl_mechanisms
// pick the others.
type Extension struct {
	// Kind is partitioner, retention, authenticator, authorizer or
	// interceptor.
	Kind string `toml:"kind"`
	// WASM is the path of a WebAssembly module; Exec the path of a plugin
	// executable (with Args). Exactly one is set.
	WASM string   `toml:"wasm"`
	Exec string   `toml:"exec"`
	Args []string `toml:"args"`
	// Config is passed to the extension as a JSON object.
	Config map[string]any `toml:"config"`
	// Fallback applies when a call fails (a trap, a timeout, a crash, a bad
	// answer): "reject" fails the request (a partitioner's produce, a
	// retention round: nothing is deleted); "builtin" uses the broker's own
	// (murmur2 placement, retention.ms/retention.bytes). Empty means builtin
	// for partitioners and retention policies and reject for authenticators
	// and authorizers, which have only reject.
	Fallback string `toml:"fallback"`
	// TimeoutMs bounds one call. 0 means 2000 for a plugin and 1000 for a
	// WASM module, whose limit costs a goroutine per call and a return to
	// the host at every loop iteration of the guest (see hooks/ABI.md).
	TimeoutMs int64 `toml:"timeout_ms"`
	// Trusted runs a WASM module with no time limit and no cost for one:
	// a trusted module that loops hangs every request that calls it.
	Trusted bool `toml:"trusted"`
	// MemoryLimitPages caps a WASM module's memory in 64 KiB pages; 0 means
	// 1024 (64 MiB).
	MemoryLimitPages uint32 `toml:"memory_limit_pages"`
	// CacheTTLMs is how long an authorizer's decisions are cached; 0 means
	// 10000, -1 disables the cache.
	CacheTTLMs int64 `toml:"cache_ttl_ms"`
	// OnError is an interceptor's failure policy (a trap, a timeout, a
	// crash, an unusable answer): "reject" (the default) fails the produce
	// with the error, "accept" appends the batch as produced.
	OnError string `toml:"on_error"`
}

// Extension kinds and fallbacks.
const (
	KindPartitioner   = "partitioner"
	KindRetention     = "retention"
	KindAuthenticator = "authenticator"
	KindAuthorizer    = "authorizer"
	KindInterceptor   = "interceptor"

	FallbackReject  = "reject"
	FallbackBuiltin = "builtin"

	OnErrorReject = "reject"
	OnErrorAccept = "accept"
)

// NoInterceptor is the value of gregor.interceptor.produce (and .fetch) that names no
// interceptor (as does an empty value).
const NoInterceptor = "none"

// EffectiveOnError is an interceptor's failure policy: OnError, or reject.
func (e Extension) EffectiveOnError() string {
	if e.OnError == "" {
		return OnErrorReject
	}
	return e.OnError
}

// BuiltinPartitioner is the name of the broker's own partitioner in
// gregor.partitioner: Kafka's murmur2 placement.
const BuiltinPartitioner = "murmur2"

// BuiltinRetention is the name of the broker's own retention in
// gregor.retention.policy: retention.ms and retention.bytes.
const BuiltinRetention = "time_size"

// EffectiveFallback is the fallback that applies: Fallback, or the kind's
// default when it is empty.
func (e Extension) EffectiveFallback() string {
	if e.Fallback != "" {
		return e.Fallback
	}
	if e.Kind == KindPartitioner || e.Kind == KindRetention {
		return FallbackBuiltin
	}
	return FallbackReject
}

// validExtensionName accepts names usable in topic configs and TOML keys.
func validExtensionName(name string) bool {
	if name == "" || len(name) > 249 {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}

func (c *Config) validateExtensions(bad func(key, format string, args ...any) error) error {
	names := make([]string, 0, len(c.Extensions))
	for n := range c.Extensions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		e := c.Extensions[name]
		key := "extensions." + name
		if !validExtensionName(name) {
			return bad(key, "the name must be letters, digits, '-', '_' or '.'")
		}
		if name == BuiltinPartitioner || name == BuiltinRetention || name == "none" || name == "acl" {
			return bad(key, "%q is the name of a built-in", name)
		}
		switch e.Kind {
		case KindPartitioner, KindRetention, KindAuthorizer, KindInterceptor:
		case KindAuthenticator:
			if e.WASM != "" {
				return bad(key+".wasm", "an authenticator runs as a plugin (exec), not as a WASM module")
			}
		case "":
			return bad(key+".kind", "missing (partitioner, retention, authenticator, authorizer or interceptor)")
		default:
			return bad(key+".kind", "%q is not partitioner, retention, authenticator, authorizer or interceptor", e.Kind)
		}
		switch {
		case e.WASM == "" && e.Exec == "":
			return bad(key, "needs wasm = PATH or exec = PATH")
		case e.WASM != "" && e.Exec != "":
			return bad(key, "sets both wasm and exec; choose one")
		case e.WASM != "" && len(e.Args) > 0:
			return bad(key+".args", "only for exec")
		}
		switch {
		case e.Kind == KindInterceptor && e.Fallback != "":
			return bad(key+".fallback", "an interceptor's failure policy is on_error (%q or %q)", OnErrorReject, OnErrorAccept)
		case e.Kind != KindInterceptor && e.OnError != "":
			return bad(key+".on_error", "only for an interceptor (use fallback)")
		}
		switch e.OnError {
		case "", OnErrorReject, OnErrorAccept:
		default:
			return bad(key+".on_error", "%q is not %q or %q", e.OnError, OnErrorReject, OnErrorAccept)
		}
		switch e.Fallback {
		case "", FallbackReject:
		case FallbackBuiltin:
			if e.Kind == KindAuthenticator || e.Kind == KindAuthorizer {
				return bad(key+".fallback", "an %s has no built-in fallback; use %q", e.Kind, FallbackReject)
			}
		default:
			return bad(key+".fallback", "%q is not %q or %q", e.Fallback, FallbackReject, FallbackBuiltin)
		}
		if e.TimeoutMs < 0 {
			return bad(key+".timeout_ms", "%d is negative", e.TimeoutMs)
		}
		if e.Trusted && e.WASM == "" {
			return bad(key+".trusted", "only for wasm")
		}
		if e.Trusted && e.TimeoutMs > 0 {
			return bad(key+".trusted", "a trusted module has no time limit; remove timeout_ms or trusted")
		}
		if e.MemoryLimitPages > 65536 {
			return bad(key+".memory_limit_pages", "%d is above 65536 (4 GiB)", e.MemoryLimitPages)
		}
		if e.MemoryLimitPages != 0 && e.WASM == "" {
			return bad(key+".memory_limit_pages", "only for wasm")
		}
		if e.CacheTTLMs < -1 {
			return bad(key+".cache_ttl_ms", "%d is below -1", e.CacheTTLMs)
		}
		if e.CacheTTLMs != 0 && e.Kind != KindAuthorizer {
			return bad(key+".cache_ttl_ms", "only for an authorizer")
		}
	}
	if a := c.Security.Authorizer; a != "none" && a != "acl" && a != "" {
		e, ok := c.Extensions[a]
		if !ok {
			return bad("security.authorizer", "%q is not none, acl or a declared extension (%s)", a, declared(c.Extensions, KindAuthorizer))
		}
		if e.Kind != KindAuthorizer {
			return bad("security.authorizer", "extension %q is a %s, not an authorizer", a, e.Kind)
		}
	}
	return nil
}

// declared lists the extensions of a kind, for error messages.
func declared(exts map[string]Extension, kind string) string {
	var names []string
	for n, e := range exts {
		if e.Kind == kind {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none of kind " + kind + " is declared"
	}
	sort.Strings(names)
	return "declared: " + strings.Join(names, ", ")
}

// ExtensionFor resolves a topic's pick of an extension of kind (from
// gregor.partitioner or gregor.retention.policy): ok is false for the
// built-in (builtinName or empty); an undeclared name or one of another kind
// is an error naming the topic config.
func (c *Config) ExtensionFor(configKey, value, kind, builtinName string) (name string, ext Extension, ok bool, err error) {
	value = strings.TrimSpace(value)
	if value == "" || value == builtinName {
		return "", Extension{}, false, nil
	}
	e, found := c.Extensions[value]
	if !found {
		return "", Extension{}, false, fmt.Errorf("config: topic config %s=%s: no such extension in broker.toml (%s)",
			configKey, value, declared(c.Extensions, kind))
	}
	if e.Kind != kind {
		return "", Extension{}, false, fmt.Errorf("config: topic config %s=%s: the extension is a %s, not a %s", configKey, value, e.Kind, kind)
	}
	return value, e, true, nil
}
