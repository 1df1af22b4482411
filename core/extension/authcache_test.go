package extension

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/sdk/auth"
)

func write(principal, topic string) auth.Action {
	p, _ := auth.ParsePrincipal(principal)
	return auth.Action{Principal: p, Operation: auth.OpWrite, Resource: auth.Resource{Type: auth.ResourceTopic, Name: topic, Pattern: auth.PatternLiteral}}
}

func TestDecisionCacheBound(t *testing.T) {
	now := time.Unix(1700000000, 0)
	c := newDecisionCache(time.Minute, 3, func() time.Time { return now })
	for _, topic := range []string{"a", "b", "c"} {
		c.put(write("User:x", topic), auth.Allow)
	}
	if c.Len() != 3 {
		t.Fatalf("len %d", c.Len())
	}
	// Full and nothing expired: the cache starts over rather than grow.
	c.put(write("User:x", "d"), auth.Deny)
	if c.Len() != 1 {
		t.Fatalf("len %d after overflow", c.Len())
	}
	if d, ok := c.get(write("User:x", "d")); !ok || d != auth.Deny {
		t.Fatalf("get d: %v %v", d, ok)
	}
	c.put(write("User:x", "e"), auth.Allow)
	now = now.Add(30 * time.Second)
	c.put(write("User:x", "f"), auth.Allow)
	now = now.Add(31 * time.Second) // d and e expired, f not
	c.put(write("User:x", "g"), auth.Allow)
	if c.Len() != 2 {
		t.Fatalf("expired entries should go first; len %d", c.Len())
	}
	if _, ok := c.get(write("User:x", "f")); !ok {
		t.Fatal("f lost")
	}
}

// countingAuthorizer allows alice, denies the rest, counts the actions it
// is asked about and fails while fail is set.
type countingAuthorizer struct {
	asked int
	fail  bool
}

func (c *countingAuthorizer) Authorize(_ context.Context, actions []auth.Action, decisions []auth.Decision) error {
	c.asked += len(actions)
	if c.fail {
		return errors.New("down")
	}
	for i, a := range actions {
		decisions[i] = auth.Deny
		if a.Principal.Name == "alice" {
			decisions[i] = auth.Allow
		}
	}
	return nil
}

// TestAuthorizerCachesItsAnswers: the decision cache sits in front of any
// authorizer extension; only answers are cached, never a failure's denials.
func TestAuthorizerCachesItsAnswers(t *testing.T) {
	now := time.Unix(1700000000, 0)
	impl := &countingAuthorizer{}
	cfg := config.Default()
	cfg.Extensions = map[string]config.Extension{"z": {Kind: config.KindAuthorizer, Exec: "z", CacheTTLMs: 10000},
		"nocache": {Kind: config.KindAuthorizer, Exec: "z", CacheTTLMs: -1}}
	s, err := New(&cfg, Opened{Authorizers: map[string]auth.Authorizer{"z": impl, "nocache": impl},
		Now: func() time.Time { return now }}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	z, _ := s.Authorizer("z")
	decide := func(az *Authorizer, principals ...string) ([]auth.Decision, error) {
		acts := make([]auth.Action, len(principals))
		for i, p := range principals {
			acts[i] = write("User:"+p, "orders")
		}
		d := make([]auth.Decision, len(acts))
		return d, az.Authorize(context.Background(), acts, d)
	}
	if d, err := decide(z, "alice", "bob"); err != nil || d[0] != auth.Allow || d[1] != auth.Deny || impl.asked != 2 {
		t.Fatalf("%v %v, asked %d", d, err, impl.asked)
	}
	// Cached: not asked again; only carol is new.
	if d, err := decide(z, "bob", "carol", "alice"); err != nil || d[0] != auth.Deny || d[1] != auth.Deny || d[2] != auth.Allow || impl.asked != 3 {
		t.Fatalf("%v %v, asked %d", d, err, impl.asked)
	}
	// A failure denies the whole batch, cached actions too, and is not cached.
	impl.fail = true
	if d, err := decide(z, "alice", "dave"); err == nil || d[0] != auth.Deny || d[1] != auth.Deny {
		t.Fatalf("failed call: %v %v", d, err)
	}
	impl.fail = false
	if d, err := decide(z, "dave"); err != nil || d[0] != auth.Deny || impl.asked != 5 {
		t.Fatalf("after the failure: %v %v, asked %d", d, err, impl.asked)
	}
	// After the TTL the extension is asked again.
	now = now.Add(10 * time.Second)
	if _, err := decide(z, "alice"); err != nil || impl.asked != 6 {
		t.Fatalf("expired: %v, asked %d", err, impl.asked)
	}
	nc, _ := s.Authorizer("nocache")
	decide(nc, "alice")
	decide(nc, "alice")
	if impl.asked != 8 {
		t.Fatalf("cache_ttl_ms = -1 still cached: asked %d", impl.asked)
	}
	for _, st := range s.Stats() {
		if st.Name == "z" && (st.Calls != 5 || st.Errors != 1) {
			t.Fatalf("stats %+v: want 5 calls (cache hits are not calls), 1 error", st)
		}
	}
}
