package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/plugins"
	"github.com/gregorbroker/gregor/sdk/auth"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
)

// buildPlugin builds this example into a temporary directory, as a user
// would with `go build`.
func buildPlugin(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command: %v", err)
		}
	}
	bin := filepath.Join(t.TempDir(), "plugin-authorizer-prefix")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func action(principal string, op auth.Operation, typ auth.ResourceType, name string) auth.Action {
	p, err := auth.ParsePrincipal(principal)
	if err != nil {
		panic(err)
	}
	return auth.Action{Principal: p, Host: "127.0.0.1", Operation: op, Resource: auth.Resource{Type: typ, Name: name, Pattern: auth.PatternLiteral}}
}

func TestThroughTheHost(t *testing.T) {
	bin := buildPlugin(t)
	z, err := plugins.OpenAuthorizer(plugins.Config{
		Name:       "payments-writers",
		Kind:       sdkplugin.KindAuthorizer,
		Path:       bin,
		ConfigJSON: []byte(`{"prefix": "payments.", "writers": ["User:billing", "User:ledger"]}`),
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	tests := []struct {
		name   string
		action auth.Action
		want   auth.Decision
	}{
		{"listed writer", action("User:billing", auth.OpWrite, auth.ResourceTopic, "payments.card"), auth.Allow},
		{"second listed writer", action("User:ledger", auth.OpWrite, auth.ResourceTopic, "payments.bank"), auth.Allow},
		{"other writer", action("User:mallory", auth.OpWrite, auth.ResourceTopic, "payments.card"), auth.Deny},
		{"anonymous writer", auth.Action{Principal: auth.Anonymous, Operation: auth.OpWrite, Resource: auth.Resource{Type: auth.ResourceTopic, Name: "payments.card"}}, auth.Deny},
		{"ALL covers WRITE", action("User:mallory", auth.OpAll, auth.ResourceTopic, "payments.card"), auth.Deny},
		{"reading is open", action("User:mallory", auth.OpRead, auth.ResourceTopic, "payments.card"), auth.Allow},
		{"other topics are open", action("User:mallory", auth.OpWrite, auth.ResourceTopic, "orders"), auth.Allow},
		{"prefix must lead", action("User:mallory", auth.OpWrite, auth.ResourceTopic, "old.payments.card"), auth.Allow},
		{"a group named like the prefix", action("User:mallory", auth.OpWrite, auth.ResourceGroup, "payments.card"), auth.Allow},
		{"service principal type", action("Service:billing", auth.OpWrite, auth.ResourceTopic, "payments.card"), auth.Deny},
	}
	// One batch, as the broker asks for a whole request at once.
	actions := make([]auth.Action, len(tests))
	for i, tt := range tests {
		actions[i] = tt.action
	}
	decisions := make([]auth.Decision, len(actions))
	if err := z.Authorize(context.Background(), actions, decisions); err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		if decisions[i] != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, decisions[i], tt.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	bin := buildPlugin(t)
	tests := []struct{ config, text string }{
		{`{"writers": ["User:a"]}`, "prefix must not be empty"},
		{`{"prefix": "p.", "writers": ["alice"]}`, `principal "alice": want Type:Name`},
		{`{"prefix": "p.", "writer": ["User:a"]}`, `unknown field "writer"`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			z, err := plugins.OpenAuthorizer(plugins.Config{
				Name: "prefix", Kind: sdkplugin.KindAuthorizer, Path: bin, ConfigJSON: []byte(tt.config),
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err == nil {
				z.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %v, want %q", err, tt.text)
			}
		})
	}
}
