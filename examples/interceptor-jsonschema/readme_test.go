package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	brokerconfig "github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/hooks/hookstest"
	sdkinterceptor "github.com/gregorbroker/gregor/sdk/interceptor"
)

// TestReadmeConfig loads the broker.toml section README.md shows, the way
// the broker does, and checks that the module it declares rejects an
// invalid record naming the field.
func TestReadmeConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```toml\n")
	if !ok {
		t.Fatal("README.md has no ```toml block")
	}
	block, _, _ = strings.Cut(block, "```")
	dir := t.TempDir()
	path := filepath.Join(dir, "broker.toml")
	toml := `data_dir = "` + filepath.Join(dir, "data") + "\"\n\n" + block
	if err := os.WriteFile(path, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := brokerconfig.Load(path)
	if err != nil {
		t.Fatalf("the README's section does not load: %v", err)
	}
	decl, ok := cfg.Extensions["orders-schema"]
	if !ok || decl.Kind != brokerconfig.KindInterceptor || decl.EffectiveOnError() != brokerconfig.OnErrorReject {
		t.Fatalf("declaration %+v", decl)
	}
	if decl.WASM != "jsonschema.wasm" {
		t.Fatalf("wasm = %q, want the file make wasm-examples builds in this directory", decl.WASM)
	}
	settings, err := json.Marshal(decl.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ic, err := hooks.LoadInterceptor(ctx, hookstest.BuildGo(t, "."), hooks.Options{Config: settings})
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close(ctx)
	d, err := ic.InterceptProduce(ctx, &sdkinterceptor.Batch{Records: []sdkinterceptor.Record{{Value: []byte(`{"id":"o-1","qty":"two"}`)}}})
	if err != nil || d.Action != sdkinterceptor.Reject || !strings.Contains(d.Message, `/qty: string is not of type integer`) {
		t.Fatalf("%+v, %v", d, err)
	}
}
