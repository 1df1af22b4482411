package extension

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gregorbroker/gregor/sdk/auth"
)

// Authorizer is a named authorizer extension with its failure policy, time
// limit and statistics applied: a failed call (an error, a timeout, a
// crash, an unusable answer) denies every action of the batch and returns
// the error. An authorizer has no built-in fallback (config rejects one).
// It is safe for concurrent use.
type Authorizer struct {
	Name    string
	impl    auth.Authorizer
	timeout time.Duration // 0: none (a trusted module)
	logger  *slog.Logger
	stats   *Stats
	warn    warnEvery
}

var _ auth.Authorizer = (*Authorizer)(nil)

// Authorize implements auth.Authorizer.
func (a *Authorizer) Authorize(ctx context.Context, actions []auth.Action, decisions []auth.Decision) error {
	if err := auth.CheckBatch(actions, decisions); err != nil {
		return fmt.Errorf("extension: authorizer %s: %w", a.Name, err)
	}
	ctx, cancel := withTimeout(ctx, a.timeout)
	defer cancel()
	start := time.Now()
	err := a.impl.Authorize(ctx, actions, decisions)
	if err == nil {
		for i, d := range decisions {
			if d != auth.Allow && d != auth.Deny {
				err = fmt.Errorf("action %d: decision %d is neither allow nor deny", i, d)
				break
			}
		}
	}
	a.stats.Observe(time.Since(start), err)
	if err == nil {
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
