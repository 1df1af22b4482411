package plugins

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gregorbroker/gregor/sdk/auth"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
	"github.com/gregorbroker/gregor/sdk/plugin/pb"
)

// Authorizer is an auth.Authorizer served by a plugin process, with a cache
// of its decisions (Config.CacheTTL, Config.CacheEntries): a request that
// asks what was asked recently does not cross the process boundary. Only
// the plugin's own answers are cached. It is safe for concurrent use.
type Authorizer struct {
	extension
	cache *decisionCache
}

var _ auth.Authorizer = (*Authorizer)(nil)

// OpenAuthorizer starts an authorizer plugin. A failing call denies every
// action of the batch and returns its error.
func OpenAuthorizer(cfg Config) (*Authorizer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(sdkplugin.KindAuthorizer); err != nil {
		return nil, err
	}
	proc, err := startProcess(cfg, func(ctx context.Context, raw any) error {
		_, err := raw.(pb.AuthorizerClient).Configure(ctx, configureRequest(cfg))
		return err
	})
	if err != nil {
		return nil, err
	}
	z := &Authorizer{extension: extension{proc: proc}}
	if cfg.CacheTTL > 0 && cfg.CacheEntries > 0 {
		z.cache = newDecisionCache(cfg.CacheTTL, cfg.CacheEntries, cfg.Now)
	}
	return z, nil
}

// Authorize implements auth.Authorizer: cached decisions are answered from
// the cache and the rest go to the plugin in one call.
func (z *Authorizer) Authorize(ctx context.Context, actions []auth.Action, decisions []auth.Decision) error {
	if err := auth.CheckBatch(actions, decisions); err != nil {
		return err
	}
	missing := actions
	var idx []int // positions in actions of missing, when some were cached
	if z.cache != nil {
		missing, idx = nil, nil
		for i, a := range actions {
			if d, ok := z.cache.get(a); ok {
				decisions[i] = d
				continue
			}
			missing = append(missing, a)
			idx = append(idx, i)
		}
		if len(missing) == 0 {
			return nil
		}
	}
	err := z.proc.call(ctx, "authorize", func(ctx context.Context, raw any) error {
		resp, err := raw.(pb.AuthorizerClient).Authorize(ctx, &pb.AuthorizeRequest{Actions: sdkplugin.ActionsToProto(missing)})
		if err != nil {
			return err
		}
		allowed := resp.GetAllowed()
		if len(allowed) != len(missing) {
			return fmt.Errorf("%w: %d decisions for %d actions", ErrExtension, len(allowed), len(missing))
		}
		for j, ok := range allowed {
			d := auth.Deny
			if ok {
				d = auth.Allow
			}
			i := j
			if idx != nil {
				i = idx[j]
			}
			decisions[i] = d
			if z.cache != nil {
				z.cache.put(missing[j], d)
			}
		}
		return nil
	})
	if err != nil {
		for i := range decisions {
			decisions[i] = auth.Deny
		}
	}
	return err
}

// decisionCache maps actions to decisions for a while, bounded in size.
type decisionCache struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu      sync.Mutex // guards entries
	entries map[auth.Action]cachedDecision
}

type cachedDecision struct {
	d       auth.Decision
	expires time.Time
}

func newDecisionCache(ttl time.Duration, max int, now func() time.Time) *decisionCache {
	return &decisionCache{ttl: ttl, max: max, now: now, entries: make(map[auth.Action]cachedDecision)}
}

func (c *decisionCache) get(a auth.Action) (auth.Decision, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[a]
	if !ok {
		return auth.Deny, false
	}
	if !c.now().Before(e.expires) {
		delete(c.entries, a)
		return auth.Deny, false
	}
	return e.d, true
}

func (c *decisionCache) put(a auth.Action, d auth.Decision) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.entries) >= c.max {
		// Drop the expired entries; if the cache is still full, drop
		// everything rather than keep an order of use on the hot path.
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
	}
	c.entries[a] = cachedDecision{d: d, expires: now.Add(c.ttl)}
}

// Len is the number of cached decisions (for tests and metrics).
func (c *decisionCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
