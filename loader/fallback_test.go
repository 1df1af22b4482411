package loader

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/log"
	"github.com/gregorbroker/gregor/core/record"
	"github.com/gregorbroker/gregor/core/server"
	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/partitioner"
)

// buildTestPlugin builds plugins/testdata/testplugin, which fails every
// call whose key, topic, user or principal is "error".
func buildTestPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testplugin")
	cmd := exec.Command(hookstest.GoTool(), "build", "-o", bin, "../plugins/testdata/testplugin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build testplugin: %v\n%s", err, out)
	}
	return bin
}

// errorLog is a log of topic "error" with three segments of old records,
// so a retention policy is asked about it (the test plugin fails on it)
// and the built-in retention would delete two.
func errorLog(t *testing.T) *log.Log {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir, err := log.OpenDir(t.TempDir(), log.Options{Logger: quiet}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	cfg := log.DefaultConfig()
	cfg.SegmentBytes = 150 // one batch a segment
	l, err := dir.Create("error", 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		b, err := record.Encode(record.BatchSpec{FirstTimestamp: 1700000000000, ProducerID: -1, BaseSequence: -1},
			[]record.Record{{Key: []byte("k"), Value: []byte("a value long enough to fill a segment")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(l.Segments()); n < 2 {
		t.Fatalf("%d segments", n)
	}
	return l
}

// TestFailingExtensionsFallBackAlike: a failing WebAssembly module and a
// failing plugin process of each kind get the same configured fallback and
// the same statistics, because both come from core/extension: the hosts
// only load and call.
func TestFailingExtensionsFallBackAlike(t *testing.T) {
	wasm := hookstest.BuildGo(t, "../hooks/testdata/fail")
	plugin := buildTestPlugin(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	hosts := []struct {
		name string
		decl func(kind string) config.Extension
	}{
		{"wasm", func(kind string) config.Extension { return config.Extension{Kind: kind, WASM: wasm} }},
		{"plugin", func(kind string) config.Extension { return config.Extension{Kind: kind, Exec: plugin} }},
	}
	type result struct {
		err       error // wanted with errors.Is; nil: the call succeeds
		fallbacks uint64
	}
	tests := []struct {
		kind     string
		fallback string // fallback, or on_error for an interceptor
		wasm     bool   // a WASM module can be this kind
		call     func(t *testing.T, s *extension.Set, name string) error
		want     result
	}{
		{config.KindPartitioner, config.FallbackBuiltin, true, callPartitioner, result{nil, 1}},
		{config.KindPartitioner, config.FallbackReject, true, callPartitioner, result{errAny, 0}},
		{config.KindRetention, config.FallbackBuiltin, true, callRetention(true), result{nil, 1}},
		{config.KindRetention, config.FallbackReject, true, callRetention(false), result{nil, 0}},
		{config.KindAuthorizer, config.FallbackReject, true, callAuthorizer, result{errAny, 0}},
		{config.KindAuthenticator, config.FallbackReject, false, callAuthenticator, result{errAny, 0}},
		{config.KindInterceptor, config.OnErrorAccept, true, callInterceptor, result{nil, 1}},
		{config.KindInterceptor, config.OnErrorReject, true, callInterceptor, result{extension.ErrInterceptFailed, 0}},
	}
	for _, tt := range tests {
		for _, h := range hosts {
			if h.name == "wasm" && !tt.wasm {
				continue
			}
			t.Run(tt.kind+"/"+tt.fallback+"/"+h.name, func(t *testing.T) {
				decl := h.decl(tt.kind)
				if tt.kind == config.KindInterceptor {
					decl.OnError = tt.fallback
				} else {
					decl.Fallback = tt.fallback
				}
				cfg := config.Default()
				cfg.Extensions = map[string]config.Extension{"ext": decl}
				if err := cfg.Validate(); err != nil {
					t.Fatal(err)
				}
				var opts server.Options
				closeAll, err := Open(context.Background(), cfg, &opts, quiet)
				if err != nil {
					t.Fatal(err)
				}
				defer closeAll()
				set, err := extension.New(&cfg, extension.Opened{Partitioners: opts.Partitioners, Retention: opts.RetentionPolicies,
					Interceptors: opts.Interceptors, Authorizers: opts.Authorizers, Authenticators: opts.Authenticators}, quiet)
				if err != nil {
					t.Fatal(err)
				}
				err = tt.call(t, set, "ext")
				switch {
				case tt.want.err == nil && err != nil:
					t.Fatalf("err = %v, want the fallback's answer", err)
				case tt.want.err == errAny && err == nil, tt.want.err != nil && tt.want.err != errAny && !errors.Is(err, tt.want.err):
					t.Fatalf("err = %v, want %v", err, tt.want.err)
				}
				st := set.Stats()
				if len(st) != 1 {
					t.Fatalf("stats %+v", st)
				}
				if got := st[0]; got.Calls != 1 || got.Errors != 1 || got.Fallbacks != tt.want.fallbacks || got.Kind != tt.kind {
					t.Fatalf("stats %+v, want 1 call, 1 error, %d fallbacks", got, tt.want.fallbacks)
				}
			})
		}
	}
}

// errAny stands for "some error".
var errAny = errors.New("any error")

func callPartitioner(t *testing.T, s *extension.Set, name string) error {
	p, err := s.TopicPartitioner(map[string]string{extension.ConfigPartitioner: name})
	if err != nil {
		t.Fatal(err)
	}
	recs := []partitioner.Record{{Key: []byte("error")}, {Key: []byte("error")}}
	out := make([]int32, len(recs))
	if err := p.PartitionBatch(recs, 7, out); err != nil {
		return err
	}
	for i, r := range recs {
		if want := partitioner.KeyPartition(r.Key, 7); out[i] != want {
			t.Fatalf("record %d on %d, want murmur2's %d", i, out[i], want)
		}
	}
	return nil
}

// callRetention runs a round; builtin says whether the built-in retention
// should have run instead of the failed policy.
func callRetention(builtin bool) func(t *testing.T, s *extension.Set, name string) error {
	return func(t *testing.T, s *extension.Set, name string) error {
		l := errorLog(t)
		r, err := s.Retain(context.Background(), map[string]string{extension.ConfigRetention: name}, l, l.LogEndOffset(), nil, 1700000000000)
		if err != nil {
			return err
		}
		// The records are from 2023: retention.ms (7 days) deletes every
		// segment but the active one.
		deleted := r.Segments > 0 && l.LogStartOffset() > 0
		if r.PolicyErr == nil || r.Fallback != builtin || r.Policy != name || deleted != builtin {
			t.Fatalf("round %+v, log start %d; want a policy error and the built-in retention run: %v", r, l.LogStartOffset(), builtin)
		}
		return nil
	}
}

func callAuthorizer(t *testing.T, s *extension.Set, name string) error {
	a, ok := s.Authorizer(name)
	if !ok {
		t.Fatal("no authorizer")
	}
	actions := []auth.Action{{Principal: auth.User("error"), Operation: auth.OpWrite,
		Resource: auth.Resource{Type: auth.ResourceTopic, Name: "t", Pattern: auth.PatternLiteral}}}
	decisions := []auth.Decision{auth.Allow}
	err := a.Authorize(context.Background(), actions, decisions)
	if decisions[0] != auth.Deny {
		t.Fatalf("a failed authorizer left %v", decisions[0])
	}
	return err
}

func callAuthenticator(t *testing.T, s *extension.Set, name string) error {
	as := s.Authenticators()
	if len(as) != 1 || as[0].Name != name {
		t.Fatalf("authenticators %v", as)
	}
	p, err := as[0].Authenticate(context.Background(), auth.Credentials{Mechanism: "PLAIN", Username: "error", Password: []byte("x")})
	if err != nil && errors.Is(err, auth.ErrAuthenticationFailed) {
		t.Fatalf("a failure reads as rejected credentials: %v", err)
	}
	if err == nil {
		t.Fatalf("authenticated %v", p)
	}
	return err
}

func callInterceptor(t *testing.T, s *extension.Set, name string) error {
	ic, err := s.TopicInterceptor(map[string]string{extension.ConfigInterceptProduce: name})
	if err != nil || ic == nil {
		t.Fatalf("interceptor %v, %v", ic, err)
	}
	d, err := ic.Intercept(context.Background(), &interceptor.Batch{Topic: "t", Records: []interceptor.Record{{Key: []byte("k"), Value: []byte("error")}}})
	if err == nil && d.Action != interceptor.Accept {
		t.Fatalf("on_error = accept answered %v", d.Action)
	}
	return err
}
