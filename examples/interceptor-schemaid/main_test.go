package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	brokerconfig "github.com/gregorbroker/gregor/core/config"
	"github.com/gregorbroker/gregor/plugins"
	"github.com/gregorbroker/gregor/sdk/interceptor"
	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
)

// wire is a value in Confluent's wire format with the given schema id.
func wire(id uint32, payload string) []byte {
	b := make([]byte, 5, 5+len(payload))
	binary.BigEndian.PutUint32(b[1:], id)
	return append(b, payload...)
}

func TestDecide(t *testing.T) {
	c, err := New(Config{AllowedIDs: []int64{42, 7, 7}})
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := New(Config{AllowedIDs: []int64{7}, Keys: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		c       *Checker
		records []interceptor.Record
		want    string // "" accepts; else the rejection's message
		errs    string // the record errors, "index message|..."
	}{
		{"allowed ids", c, []interceptor.Record{{Value: wire(7, "a")}, {Value: wire(42, "")}}, "", ""},
		{"tombstone", c, []interceptor.Record{{Value: nil}}, "", ""},
		{"other id", c, []interceptor.Record{{Value: wire(7, "a")}, {Value: wire(9, "b")}},
			"schema id check failed: record 1: value schema id 9 is not allowed (allowed: 7, 42)",
			"1 value schema id 9 is not allowed (allowed: 7, 42)"},
		{"every failing record listed", c, []interceptor.Record{{Value: []byte("{}")}, {Value: wire(7, "")}, {Value: []byte{1, 0, 0, 0, 7}}, {Value: []byte{}}},
			"schema id check failed: record 0: value is not in the Confluent wire format: 2 bytes, shorter than the 5-byte header (and 2 more records)",
			"0 value is not in the Confluent wire format: 2 bytes, shorter than the 5-byte header|2 value is not in the Confluent wire format: magic byte 1, want 0|3 value is not in the Confluent wire format: 0 bytes, shorter than the 5-byte header"},
		{"high bit id", c, []interceptor.Record{{Value: wire(1<<31, "")}}, "schema id check failed: record 0: value schema id -2147483648 is not allowed (allowed: 7, 42)",
			"0 value schema id -2147483648 is not allowed (allowed: 7, 42)"},
		{"keys unchecked by default", c, []interceptor.Record{{Key: []byte("k"), Value: wire(7, "")}}, "", ""},
		{"keys checked", keyed, []interceptor.Record{{Key: wire(7, "k"), Value: wire(7, "")}, {Key: nil, Value: wire(7, "")}, {Key: wire(8, "k"), Value: wire(7, "")}},
			"schema id check failed: record 2: key schema id 8 is not allowed (allowed: 7)", "2 key schema id 8 is not allowed (allowed: 7)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.c.Decide(&interceptor.Batch{Records: tt.records})
			if err := interceptor.Check(&d, len(tt.records)); err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if d.Action != interceptor.Accept {
					t.Fatalf("%+v, want accept", d)
				}
				return
			}
			var errs []string
			for _, e := range d.Errors {
				errs = append(errs, fmt.Sprintf("%d %s", e.Index, e.Message))
			}
			if d.Action != interceptor.Reject || d.Message != tt.want || strings.Join(errs, "|") != tt.errs {
				t.Fatalf("%v %q %q\nwant reject %q %q", d.Action, d.Message, errs, tt.want, tt.errs)
			}
		})
	}
}

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
	bin := filepath.Join(t.TempDir(), "interceptor-schemaid")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func openPlugin(bin string, config []byte) (*plugins.Interceptor, error) {
	return plugins.OpenInterceptor(plugins.Config{
		Name: "schema-ids", Kind: sdkplugin.KindInterceptor, Path: bin, ConfigJSON: config,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// TestReadmeConfig loads the broker.toml section README.md shows, the way
// the broker does, and runs the plugin it declares through the broker's
// plugin host with that config: an allowed id passes, another is rejected
// with a message naming the record and the id.
func TestReadmeConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin")
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
	decl, ok := cfg.Extensions["orders-schema-ids"]
	if !ok || decl.Kind != brokerconfig.KindInterceptor || decl.EffectiveOnError() != brokerconfig.OnErrorReject {
		t.Fatalf("declaration %+v", decl)
	}
	if decl.Exec != "./interceptor-schemaid" {
		t.Fatalf("exec = %q, want the binary go build makes in this directory", decl.Exec)
	}
	settings, err := json.Marshal(decl.Config)
	if err != nil {
		t.Fatal(err)
	}
	ic, err := openPlugin(buildPlugin(t), settings)
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close()
	ctx := context.Background()
	d, err := ic.InterceptProduce(ctx, &interceptor.Batch{Topic: "orders", Records: []interceptor.Record{{Value: wire(1, "avro")}, {Value: wire(3, "avro")}}})
	if err != nil || d.Action != interceptor.Accept {
		t.Fatalf("allowed ids: %+v, %v", d, err)
	}
	d, err = ic.InterceptProduce(ctx, &interceptor.Batch{Topic: "orders", Records: []interceptor.Record{{Value: wire(1, "avro")}, {Value: wire(99, "avro")}}})
	if err != nil || d.Action != interceptor.Reject || len(d.Errors) != 1 || d.Errors[0].Index != 1 ||
		!strings.Contains(d.Message, "record 1: value schema id 99 is not allowed") {
		t.Fatalf("id 99: %+v, %v", d, err)
	}
}

func TestConfigErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin")
	}
	bin := buildPlugin(t)
	for _, tt := range []struct{ config, text string }{
		{`{}`, "allowed_ids must list at least one schema id"},
		{`{"allowed_ids": [1, -2]}`, "-2 is not a schema id"},
		{`{"allowed_ids": [4294967296]}`, "4294967296 is not a schema id"},
		{`{"allowed_id": [1]}`, `unknown field "allowed_id"`},
	} {
		t.Run(tt.text, func(t *testing.T) {
			ic, err := openPlugin(bin, []byte(tt.config))
			if err == nil {
				ic.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %v, want %q", err, tt.text)
			}
		})
	}
}
