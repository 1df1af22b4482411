package plugins

import (
	"context"
	"errors"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/sdk/auth"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
)

func TestAuthenticatorPlugin(t *testing.T) {
	cfg, _, _ := testConfig(t, sdkplugin.KindAuthenticator, `{"users": {"alice": "secret"}}`)
	a, err := OpenAuthenticator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if m := a.Mechanisms(); !reflect.DeepEqual(m, []string{"PLAIN"}) {
		t.Fatalf("mechanisms %v", m)
	}
	tests := []struct {
		name   string
		user   string
		pass   string
		want   auth.Principal
		target error
	}{
		{"good", "alice", "secret", auth.User("alice"), nil},
		{"wrong password", "alice", "guess", auth.Principal{}, auth.ErrAuthenticationFailed},
		{"unknown user", "mallory", "secret", auth.Principal{}, auth.ErrAuthenticationFailed},
		{"authenticator error", "error", "", auth.Principal{}, ErrExtension},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Authenticate(context.Background(), auth.Credentials{Mechanism: "PLAIN", Username: tt.user, Password: []byte(tt.pass)})
			if tt.target != nil {
				if !errors.Is(err, tt.target) {
					t.Fatalf("err = %v, want %v", err, tt.target)
				}
				return
			}
			if err != nil || p != tt.want {
				t.Fatalf("principal %v err %v, want %v", p, err, tt.want)
			}
		})
	}
}

func write(principal, topic string) auth.Action {
	p, _ := auth.ParsePrincipal(principal)
	return auth.Action{Principal: p, Operation: auth.OpWrite, Resource: auth.Resource{Type: auth.ResourceTopic, Name: topic, Pattern: auth.PatternLiteral}}
}

func TestAuthorizerDecidesAndCaches(t *testing.T) {
	cfg, clock, _ := testConfig(t, sdkplugin.KindAuthorizer, `{"allow": ["User:alice"]}`)
	cfg.CacheTTL = 10 * time.Second
	z, err := OpenAuthorizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	actions := []auth.Action{write("User:alice", "orders"), write("User:bob", "orders")}
	decisions := make([]auth.Decision, 2)
	if err := z.Authorize(context.Background(), actions, decisions); err != nil {
		t.Fatal(err)
	}
	if decisions[0] != auth.Allow || decisions[1] != auth.Deny {
		t.Fatalf("decisions %v", decisions)
	}
	if z.cache.Len() != 2 {
		t.Fatalf("%d cached decisions", z.cache.Len())
	}

	// With the process gone, cached decisions are still the plugin's; a
	// batch with an uncached action fails and denies every action.
	z.proc.mu.Lock()
	pid := z.proc.client.ReattachConfig().Pid
	z.proc.mu.Unlock()
	must(t, syscall.Kill(pid, syscall.SIGKILL))
	mixed := []auth.Action{write("User:bob", "orders"), write("User:carol", "orders"), write("User:alice", "orders")}
	decisions = []auth.Decision{auth.Allow, auth.Allow, auth.Allow}
	if err := z.Authorize(context.Background(), mixed, decisions); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if decisions[0] != auth.Deny || decisions[1] != auth.Deny || decisions[2] != auth.Deny {
		t.Fatalf("a failed call left decisions %v", decisions)
	}
	cachedOnly := []auth.Action{write("User:bob", "orders"), write("User:alice", "orders")}
	decisions = make([]auth.Decision, 2)
	if err := z.Authorize(context.Background(), cachedOnly, decisions); err != nil {
		t.Fatal(err)
	}
	if decisions[0] != auth.Deny || decisions[1] != auth.Allow {
		t.Fatalf("cached decisions %v", decisions)
	}
	// After the TTL the cache no longer answers.
	clock.Advance(10 * time.Second)
	if err := z.Authorize(context.Background(), cachedOnly, decisions); err == nil {
		t.Fatal("expired decisions were answered with the process down")
	}
	if err := z.WaitReady(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := z.Authorize(context.Background(), cachedOnly, decisions); err != nil || decisions[0] != auth.Deny || decisions[1] != auth.Allow {
		t.Fatalf("after restart: %v %v", decisions, err)
	}
}

func TestAuthorizerError(t *testing.T) {
	cfg, _, _ := testConfig(t, sdkplugin.KindAuthorizer, `{"allow": ["User:alice"]}`)
	cfg.CacheTTL = -1
	z, err := OpenAuthorizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if z.cache != nil {
		t.Fatal("a negative TTL should disable the cache")
	}
	err = z.Authorize(context.Background(), []auth.Action{write("User:error", "t")}, make([]auth.Decision, 1))
	if !errors.Is(err, ErrExtension) {
		t.Fatalf("err = %v", err)
	}
}

func TestDecisionCacheBound(t *testing.T) {
	clock := newFakeClock()
	c := newDecisionCache(time.Minute, 3, clock.Now)
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
	clock.Advance(30 * time.Second)
	c.put(write("User:x", "f"), auth.Allow)
	clock.Advance(31 * time.Second) // d and e expired, f not
	c.put(write("User:x", "g"), auth.Allow)
	if c.Len() != 2 {
		t.Fatalf("expired entries should go first; len %d", c.Len())
	}
	if _, ok := c.get(write("User:x", "f")); !ok {
		t.Fatal("f lost")
	}
}
