// Package loader opens the extensions a broker.toml declares
// ([extensions.NAME]): WebAssembly modules through hooks and plugin
// processes through plugins, and hands them to the server as sdk contracts
// in server.Options. It is the one wiring path shared by `gregor serve` and
// the tests that start a broker the way serve does. It owns no extension
// behaviour: fallback, failure policy, time limits and statistics are the
// broker's (core/extension), the same for both hosts.
package loader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/core/extension"
	"github.com/gregorbroker/gregor/core/server"
	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/plugins"
	sdkauth "github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/partitioner"
	"github.com/gregorbroker/gregor/sdk/retention"
)

// Open opens every [extensions.NAME] of cfg: WASM modules through hooks,
// plugin processes through plugins. It fills opts with them and returns a
// function that closes them all; on error, whatever was opened is closed.
// The hosts only load and call: each extension's fallback, failure
// policy, time limit and statistics are core/extension's, which also
// resolves the time limit the hosts enforce (extension.CallTimeout).
func Open(ctx context.Context, cfg config.Config, opts *server.Options, logger *slog.Logger) (_ func(), err error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		// Not the named result: an error return sets that to nil.
		if err != nil {
			closeAll()
		}
	}()
	names := make([]string, 0, len(cfg.Extensions))
	for n := range cfg.Extensions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		decl := cfg.Extensions[name]
		log := logger.With("extension", name)
		settings, err := json.Marshal(decl.Config)
		if err != nil {
			return nil, fmt.Errorf("loader: extensions.%s.config: %w", name, err)
		}
		if decl.Config == nil {
			settings = []byte("{}")
		}
		var (
			impl   any
			closer func()
		)
		if decl.WASM != "" {
			impl, closer, err = openWASM(ctx, name, decl, settings, log)
		} else {
			impl, closer, err = openPlugin(name, decl, settings, log)
		}
		if err != nil {
			return nil, fmt.Errorf("loader: extensions.%s: %w", name, err)
		}
		closers = append(closers, closer)
		if err := register(opts, name, decl.Kind, impl); err != nil {
			return nil, err
		}
		log.Info("extension loaded", "kind", decl.Kind, "wasm", decl.WASM, "exec", decl.Exec)
	}
	return closeAll, nil
}

// register puts an opened extension where the server looks for its kind.
func register(opts *server.Options, name, kind string, impl any) error {
	ok := false
	switch kind {
	case config.KindPartitioner:
		var p partitioner.BatchPartitioner
		if p, ok = impl.(partitioner.BatchPartitioner); ok {
			if opts.Partitioners == nil {
				opts.Partitioners = map[string]partitioner.BatchPartitioner{}
			}
			opts.Partitioners[name] = p
		}
	case config.KindRetention:
		var r retention.Policy
		if r, ok = impl.(retention.Policy); ok {
			if opts.RetentionPolicies == nil {
				opts.RetentionPolicies = map[string]retention.Policy{}
			}
			opts.RetentionPolicies[name] = r
		}
	case config.KindAuthorizer:
		var a sdkauth.Authorizer
		if a, ok = impl.(sdkauth.Authorizer); ok {
			if opts.Authorizers == nil {
				opts.Authorizers = map[string]sdkauth.Authorizer{}
			}
			opts.Authorizers[name] = a
		}
	case config.KindInterceptor:
		var ic interceptor.Interceptor
		if ic, ok = impl.(interceptor.Interceptor); ok {
			if opts.Interceptors == nil {
				opts.Interceptors = map[string]interceptor.Interceptor{}
			}
			opts.Interceptors[name] = ic
		}
	case config.KindAuthenticator:
		var a sdkauth.Authenticator
		if a, ok = impl.(sdkauth.Authenticator); ok {
			if opts.Authenticators == nil {
				opts.Authenticators = map[string]sdkauth.Authenticator{}
			}
			opts.Authenticators[name] = a
		}
	}
	if !ok {
		return fmt.Errorf("loader: extensions.%s: a %T is not a %s", name, impl, kind)
	}
	return nil
}

func openWASM(ctx context.Context, name string, decl config.Extension, settings []byte, log *slog.Logger) (any, func(), error) {
	o := hooks.Options{
		MemoryLimitPages: decl.MemoryLimitPages,
		CallTimeout:      extension.CallTimeout(decl),
		Trusted:          decl.Trusted,
		Config:           settings,
		Logger:           log,
	}
	closeCtx := func(c func(context.Context) error) func() {
		return func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := c(ctx); err != nil {
				log.Warn("closing extension", "err", err)
			}
		}
	}
	switch decl.Kind {
	case config.KindPartitioner:
		p, err := hooks.LoadPartitioner(ctx, decl.WASM, o)
		if err != nil {
			return nil, nil, err
		}
		return p, closeCtx(p.Close), nil
	case config.KindRetention:
		r, err := hooks.LoadRetentionPolicy(ctx, decl.WASM, o)
		if err != nil {
			return nil, nil, err
		}
		return r, closeCtx(r.Close), nil
	case config.KindAuthorizer:
		a, err := hooks.LoadAuthorizer(ctx, decl.WASM, o)
		if err != nil {
			return nil, nil, err
		}
		return a, closeCtx(a.Close), nil
	case config.KindInterceptor:
		ic, err := hooks.LoadInterceptor(ctx, decl.WASM, o)
		if err != nil {
			return nil, nil, err
		}
		return ic, closeCtx(ic.Close), nil
	}
	return nil, nil, fmt.Errorf("a %s cannot be a WASM module", decl.Kind)
}

func openPlugin(name string, decl config.Extension, settings []byte, log *slog.Logger) (any, func(), error) {
	pc := plugins.Config{
		Name:        name,
		Kind:        decl.Kind,
		Path:        decl.Exec,
		Args:        decl.Args,
		ConfigJSON:  settings,
		CallTimeout: extension.CallTimeout(decl),
		Logger:      log,
	}
	switch decl.Kind {
	case config.KindPartitioner:
		p, err := plugins.OpenPartitioner(pc)
		if err != nil {
			return nil, nil, err
		}
		return p, func() { p.Close() }, nil
	case config.KindRetention:
		r, err := plugins.OpenRetention(pc)
		if err != nil {
			return nil, nil, err
		}
		return r.Policy(), func() { r.Close() }, nil
	case config.KindAuthenticator:
		a, err := plugins.OpenAuthenticator(pc)
		if err != nil {
			return nil, nil, err
		}
		return a, func() { a.Close() }, nil
	case config.KindAuthorizer:
		a, err := plugins.OpenAuthorizer(pc)
		if err != nil {
			return nil, nil, err
		}
		return a, func() { a.Close() }, nil
	case config.KindInterceptor:
		ic, err := plugins.OpenInterceptor(pc)
		if err != nil {
			return nil, nil, err
		}
		return ic, func() { ic.Close() }, nil
	}
	return nil, nil, errors.New("unknown kind " + decl.Kind)
}
