package main

import (
	"context"
	"testing"

	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/gregorbroker/gregor/sdk/auth"
)

const testConfig = `{
  "super_users": ["User:admin"],
  "allow": [
    {"principal": "User:alice", "operation": "WRITE", "resource": "TOPIC", "prefix": "orders-"},
    {"principal": "*", "operation": "READ", "resource": "TOPIC", "prefix": "public-"},
    {"principal": "User:bob", "operation": "ALL", "resource": "GROUP", "prefix": "bob-"}
  ]
}`

func topic(who, op, name string) auth.Action {
	p, _ := auth.ParsePrincipal(who)
	o, _ := auth.ParseOperation(op)
	return auth.Action{Principal: p, Host: "127.0.0.1", Operation: o, Resource: auth.Resource{Type: auth.ResourceTopic, Name: name, Pattern: auth.PatternLiteral}}
}

var cases = []struct {
	name string
	act  auth.Action
	want auth.Decision
}{
	{"alice writes orders", topic("User:alice", "WRITE", "orders-eu"), auth.Allow},
	{"alice writes payments", topic("User:alice", "WRITE", "payments"), auth.Deny},
	{"alice reads orders", topic("User:alice", "READ", "orders-eu"), auth.Deny},
	{"anyone reads public", topic("User:carol", "READ", "public-news"), auth.Allow},
	{"anyone describes", topic("User:carol", "DESCRIBE", "secret"), auth.Allow},
	{"admin deletes", topic("User:admin", "DELETE", "orders-eu"), auth.Allow},
	{"bob in his group", auth.Action{Principal: auth.User("bob"), Operation: auth.OpRead, Resource: auth.Resource{Type: auth.ResourceGroup, Name: "bob-1", Pattern: auth.PatternLiteral}}, auth.Allow},
	{"bob as a topic", topic("User:bob", "READ", "bob-1"), auth.Deny},
	{"anonymous writes", auth.Action{Principal: auth.Anonymous, Operation: auth.OpWrite, Resource: auth.Resource{Type: auth.ResourceTopic, Name: "orders-x"}}, auth.Deny},
}

func TestDecide(t *testing.T) {
	if err := configure([]byte(testConfig)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		if got := decide(tc.act); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{`{"allow":[{"principal":"alice","operation":"WRITE","resource":"TOPIC"}]}`,
		`{"allow":[{"principal":"*","operation":"FLY","resource":"TOPIC"}]}`,
		`{"allow":[{"principal":"*","operation":"READ","resource":"TABLE"}]}`, `[`} {
		if err := configure([]byte(bad)); err == nil {
			t.Errorf("config %s accepted", bad)
		}
	}
}

// TestModule builds the module and asks the broker's host the same
// questions in one batch.
func TestModule(t *testing.T) {
	ctx := context.Background()
	a, err := hooks.LoadAuthorizer(ctx, hookstest.BuildGo(t, "."), hooks.Options{Config: []byte(testConfig)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	acts := make([]auth.Action, len(cases))
	for i, tc := range cases {
		acts[i] = tc.act
	}
	dec := make([]auth.Decision, len(acts))
	if err := a.Authorize(ctx, acts, dec); err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		if dec[i] != tc.want {
			t.Errorf("%s: module said %v, want %v", tc.name, dec[i], tc.want)
		}
	}
	if _, err := hooks.LoadAuthorizer(ctx, hookstest.BuildGo(t, "."), hooks.Options{Config: []byte(`{"allow":[{"principal":"x"}]}`)}); err == nil {
		t.Fatal("bad rule accepted at load")
	}
}
