package extension

import (
	"sync"
	"time"

	"github.com/gregorbroker/gregor/sdk/auth"
)

// Decision cache defaults: config.Extension.CacheTTLMs = 0 means
// DefaultAuthCacheTTL; the cache holds at most authCacheEntries.
const (
	DefaultAuthCacheTTL = 10 * time.Second
	authCacheEntries    = 10000
)

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

// Len is the number of cached decisions.
func (c *decisionCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
