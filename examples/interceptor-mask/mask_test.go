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
	"github.com/gregorbroker/gregor/sdk/auth"
	sdkinterceptor "github.com/gregorbroker/gregor/sdk/interceptor"
)

func TestMask(t *testing.T) {
	r, err := ParseConfig([]byte(`{"fields":["ssn","card.number","items.secret"],"allow":["User:alice"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want, err string }{
		{`{"name":"Ada","ssn":"123","card":{"number":"4111","exp":"12/30"}}`, `{"name":"Ada","ssn":"****","card":{"number":"****","exp":"12/30"}}`, ""},
		{`{ "s\u0073n" : "1" , "a":[1,{"b":"}\""}], "ssn":2 }`, `{ "s\u0073n" : "****" , "a":[1,{"b":"}\""}], "ssn":"****" }`, ""},
		{`{"card":[{"number":1},[{"number":2}],"x"]}`, `{"card":[{"number":"****"},[{"number":"****"}],"x"]}`, ""},
		{`{"card":"flat","ssnx":1}`, `{"card":"flat","ssnx":1}`, ""},
		{`{"items":[{"secret":1},{"x":2}],"n":1.50}`, `{"items":[{"secret":"****"},{"x":2}],"n":1.50}`, ""},
		{`{"name":"<Ada & co>"}`, `{"name":"<Ada & co>"}`, ""}, // nothing to mask: as stored
		{`[1,2]`, "", "not a JSON object"},
		{`{"ssn":1} {}`, "", "not a JSON object"},
		{`not json`, "", "not a JSON object"},
	} {
		got, _, err := r.Mask([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if !r.Allowed("User", "alice") || r.Allowed("User", "bob") {
		t.Error("allow-list")
	}
	for _, bad := range []string{`{}`, `{"fields":["a..b"]}`, `{"fields":["a"],"allow":["alice"]}`, `{"fields":["a"],"typo":1}`} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("config %s accepted", bad)
		}
	}
}

// TestReadmeModule loads the broker.toml section README.md shows, the way
// the broker does, builds the module and runs it through the broker's
// WebAssembly host for a masked and an allow-listed principal.
func TestReadmeModule(t *testing.T) {
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
	if err := os.WriteFile(path, []byte(`data_dir = "`+filepath.Join(dir, "data")+"\"\n\n"+block), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := brokerconfig.Load(path)
	if err != nil {
		t.Fatalf("the README's section does not load: %v", err)
	}
	decl, ok := cfg.Extensions["pii-mask"]
	if !ok || decl.Kind != brokerconfig.KindInterceptor || decl.WASM != "mask.wasm" {
		t.Fatalf("declaration %+v", decl)
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
	if v := ic.Module().Info().ABIVersion; v != 2 {
		t.Errorf("ABI version %d, want 2", v)
	}
	recs := []sdkinterceptor.Record{{Value: []byte(`{"name":"Ada","ssn":"123"}`)}, {Value: nil}}
	d, err := ic.InterceptProduce(ctx, &sdkinterceptor.Batch{Principal: auth.Principal{Type: "User", Name: "bob"}, Records: recs})
	if err != nil || d.Action != sdkinterceptor.Rewrite || string(d.Records[0].Value) != `{"name":"Ada","ssn":"****"}` || d.Records[1].Value != nil {
		t.Fatalf("bob: %+v, %v", d, err)
	}
	d, err = ic.InterceptProduce(ctx, &sdkinterceptor.Batch{Principal: auth.Principal{Type: "User", Name: "alice"}, Records: recs})
	if err != nil || d.Action != sdkinterceptor.Accept {
		t.Fatalf("alice: %+v, %v", d, err)
	}
	d, err = ic.InterceptProduce(ctx, &sdkinterceptor.Batch{Principal: auth.Principal{Type: "User", Name: "bob"}, Records: []sdkinterceptor.Record{{Value: []byte("plain text")}}})
	if err != nil || d.Action != sdkinterceptor.Reject || len(d.Errors) != 1 || d.Errors[0].Index != 0 {
		t.Fatalf("bob, unmaskable: %+v, %v", d, err)
	}
}
