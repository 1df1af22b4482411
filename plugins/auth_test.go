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

func TestAuthorizerDecides(t *testing.T) {
	cfg, clock, _ := testConfig(t, sdkplugin.KindAuthorizer, `{"allow": ["User:alice"]}`)
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

	// With the process gone the call fails and denies every action.
	z.proc.mu.Lock()
	pid := z.proc.client.ReattachConfig().Pid
	z.proc.mu.Unlock()
	must(t, syscall.Kill(pid, syscall.SIGKILL))
	decisions = []auth.Decision{auth.Allow, auth.Allow}
	if err := z.Authorize(context.Background(), actions, decisions); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if decisions[0] != auth.Deny || decisions[1] != auth.Deny {
		t.Fatalf("a failed call left decisions %v", decisions)
	}
	clock.Advance(time.Second)
	if err := z.WaitReady(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := z.Authorize(context.Background(), actions, decisions); err != nil || decisions[0] != auth.Allow || decisions[1] != auth.Deny {
		t.Fatalf("after restart: %v %v", decisions, err)
	}
}

func TestAuthorizerError(t *testing.T) {
	cfg, _, _ := testConfig(t, sdkplugin.KindAuthorizer, `{"allow": ["User:alice"]}`)
	z, err := OpenAuthorizer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	err = z.Authorize(context.Background(), []auth.Action{write("User:error", "t")}, make([]auth.Decision, 1))
	if !errors.Is(err, ErrExtension) {
		t.Fatalf("err = %v", err)
	}
}
