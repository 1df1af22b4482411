package extension

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/sdk/auth"
)

// Authorizer is a named authorizer extension with its decision cache,
// failure policy, time limit and statistics applied: a failed call (an
// error, a timeout, a crash, an unusable answer) denies every action of the
// batch and returns the error. An authorizer has no built-in fallback
// (config rejects one). Only the extension's own answers are cached
// (cache_ttl_ms), and a batch whose every action is cached does not call
// it. It is safe for concurrent use.
type Authorizer struct {
	Name    string
	impl    auth.Authorizer
	cache   *decisionCache // nil: cache_ttl_ms = -1
	timeout time.Duration  // 0: none (a trusted module)
	logger  *slog.Logger
	stats   *Stats
	warn    warnEvery
}

func newAuthorizer(name string, decl config.Extension, impl auth.Authorizer, now func() time.Time, logger *slog.Logger, st *Stats) *Authorizer {
	a := &Authorizer{Name: name, impl: impl, timeout: CallTimeout(decl), logger: logger, stats: st}
	ttl := time.Duration(decl.CacheTTLMs) * time.Millisecond
	if decl.CacheTTLMs == 0 {
		ttl = DefaultAuthCacheTTL
	}
	if ttl > 0 {
		a.cache = newDecisionCache(ttl, authCacheEntries, now)
	}
	return a
}

var _ auth.Authorizer = (*Authorizer)(nil)

// Authorize implements auth.Authorizer.
func (a *Authorizer) Authorize(ctx context.Context, actions []auth.Action, decisions []auth.Decision) error {
	if err := auth.CheckBatch(actions, decisions); err != nil {
		return fmt.Errorf("extension: authorizer %s: %w", a.Name, err)
	}
	ask, answers := actions, decisions
	var idx []int // positions in actions of ask, when some were cached
	if a.cache != nil {
		ask, idx = nil, nil
		for i, act := range actions {
			if d, ok := a.cache.get(act); ok {
				decisions[i] = d
				continue
			}
			ask = append(ask, act)
			idx = append(idx, i)
		}
		if len(ask) == 0 {
			return nil
		}
		if len(ask) < len(actions) {
			answers = make([]auth.Decision, len(ask))
		}
	}
	ctx, cancel := withTimeout(ctx, a.timeout)
	defer cancel()
	start := time.Now()
	err := a.impl.Authorize(ctx, ask, answers)
	if err == nil {
		for i, d := range answers {
			if d != auth.Allow && d != auth.Deny {
				err = fmt.Errorf("action %d: decision %d is neither allow nor deny", i, d)
				break
			}
		}
	}
	a.stats.Observe(time.Since(start), err)
	if err == nil {
		for j, d := range answers {
			i := j
			if idx != nil {
				i = idx[j]
			}
			decisions[i] = d
			if a.cache != nil {
				a.cache.put(ask[j], d)
			}
		}
		return nil
	}
	for i := range decisions {
		decisions[i] = auth.Deny
	}
	err = fmt.Errorf("extension: authorizer %s: %w", a.Name, err)
	if a.warn.allow() {
		a.logger.Warn("authorizer failed; fallback reject denies the batch", "actions", len(actions), "err", err)
	}
	return err
}

// Authenticator is a named authenticator extension with its failure
// policy, time limit and statistics applied: a failed call fails the
// authentication with the error. Rejected credentials
// (auth.ErrAuthenticationFailed) are an answer, not a failure. It is safe
// for concurrent use.
type Authenticator struct {
	Name    string
	impl    auth.Authenticator
	timeout time.Duration
	logger  *slog.Logger
	stats   *Stats
	warn    warnEvery
}

var _ auth.Authenticator = (*Authenticator)(nil)

// Mechanisms implements auth.Authenticator.
func (a *Authenticator) Mechanisms() []string { return a.impl.Mechanisms() }

// Authenticate implements auth.Authenticator.
func (a *Authenticator) Authenticate(ctx context.Context, c auth.Credentials) (auth.Principal, error) {
	ctx, cancel := withTimeout(ctx, a.timeout)
	defer cancel()
	start := time.Now()
	p, err := a.impl.Authenticate(ctx, c)
	failure := err
	if errors.Is(err, auth.ErrAuthenticationFailed) {
		failure = nil
	} else if err == nil && (p.Type == "" || p.Name == "") {
		failure = fmt.Errorf("answered an empty principal %q", p.String())
		err = failure
	}
	a.stats.Observe(time.Since(start), failure)
	if err == nil {
		return p, nil
	}
	if failure == nil {
		return auth.Principal{}, err
	}
	err = fmt.Errorf("extension: authenticator %s: %w", a.Name, err)
	if a.warn.allow() {
		a.logger.Warn("authenticator failed; fallback reject fails the authentication", "mechanism", c.Mechanism, "err", err)
	}
	return auth.Principal{}, err
}

// Authorizer is the authorizer extension named name, as security.authorizer
// picks it.
func (s *Set) Authorizer(name string) (*Authorizer, bool) {
	a, ok := s.authorizers[name]
	return a, ok
}

// Authenticators are the authenticator extensions, by name.
func (s *Set) Authenticators() []*Authenticator {
	out := make([]*Authenticator, 0, len(s.authenticators))
	for _, name := range s.names {
		if a, ok := s.authenticators[name]; ok {
			out = append(out, a)
		}
	}
	return out
}
