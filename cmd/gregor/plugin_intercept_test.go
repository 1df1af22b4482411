package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/hooks/hookstest"
)

// interceptLines runs `plugin test --intercept` with the records and
// returns its exit code, each output line decoded, and its stderr.
func interceptLines(t *testing.T, records []string, args ...string) (int, []map[string]any, string) {
	t.Helper()
	code, out, errOut := runCapture(t, strings.Join(records, "\n")+"\n", append([]string{"plugin", "test"}, args...)...)
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("output line %q: %v\nstderr: %s", l, err, errOut)
		}
		lines = append(lines, m)
	}
	return code, lines, errOut
}

// wantLines compares output lines with the wanted ones, given as JSON;
// a wanted string ending in "..." matches any string it begins.
func wantLines(t *testing.T, got []map[string]any, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		var wm map[string]any
		if err := json.Unmarshal([]byte(w), &wm); err != nil {
			t.Fatalf("wanted line %q: %v", w, err)
		}
		for k, v := range wm {
			if s, ok := v.(string); ok && strings.HasSuffix(s, "...") {
				if g, _ := got[i][k].(string); strings.HasPrefix(g, strings.TrimSuffix(s, "...")) {
					got[i][k] = v
				}
			}
		}
		if !reflect.DeepEqual(got[i], wm) {
			t.Fatalf("line %d: %v\nwant %v", i, got[i], wm)
		}
	}
}

// TestPluginTestInterceptProduce: records given as JSON lines go through
// a WebAssembly and a go-plugin produce interceptor as the broker sends
// them, and the decision of each record's batch is printed; a failing
// call is reported on its batch's lines and in the exit status.
func TestPluginTestInterceptProduce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module and plugins")
	}
	schema := filepath.Join("..", "..", "examples", "interceptor-jsonschema")
	wasm := hookstest.BuildGo(t, schema)
	cfg := `{"schema": {"type": "object", "required": ["id", "qty"], "properties": {"qty": {"type": "integer", "minimum": 1}}}}`
	code, lines, errOut := interceptLines(t, []string{
		`{"value": {"id": "o-1", "qty": 2}}`,
		`{"value": "{\"id\": \"o-2\", \"qty\": \"two\"}", "key": "k2"}`,
		`{"value": {"id": "o-3"}}`, `{"value": {"id": "o-4", "qty": 4}}`,
	}, "--wasm", wasm, "--config", cfg, "--intercept", "produce", "--batch", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantLines(t, lines,
		`{"record": 0, "batch": 0, "decision": "reject", "message": "value does not match the topic's JSON Schema: record 1: /qty: ..."}`,
		`{"record": 1, "batch": 0, "decision": "reject", "message": "value does not match the topic's JSON Schema: record 1: /qty: ...", "error": "/qty: string is not of type integer"}`,
		`{"record": 2, "batch": 1, "decision": "reject", "message": "value does not match the topic's JSON Schema: record 0: /qty: ...", "error": "/qty: required property is missing"}`,
		`{"record": 3, "batch": 1, "decision": "reject", "message": "value does not match the topic's JSON Schema: record 0: /qty: ..."}`)

	// The go-plugin test binary upper-cases values, rejects "reject" and
	// answers one record short for "shrink".
	bin := buildTestPlugin(t)
	code, lines, errOut = interceptLines(t, []string{
		`{"key": "k", "value": "abc", "headers": {"b": "2", "a": null}}`,
		`{"value": "ok"}`, `{"value": "reject"}`,
		`{"value": "shrink"}`,
	}, "--exec", bin, "--intercept", "produce", "--batch", "1", "--principal", "User:bob")
	if code != exitError || !strings.Contains(errOut, "failed on 1 of 4 batches") {
		t.Fatalf("exit %d, stderr %q: want an error for the failed batch", code, errOut)
	}
	if len(lines) == 4 && !strings.Contains(fmt.Sprint(lines[3]["error"]), "rewrite returned 0 records for a batch of 1") {
		t.Fatalf("count-changing rewrite: %v", lines[3])
	}
	wantLines(t, lines,
		`{"record": 0, "batch": 0, "decision": "rewrite", "key": "k", "value": "ABC", "headers": {"b": "2", "a": null}}`,
		`{"record": 1, "batch": 1, "decision": "rewrite", "key": null, "value": "OK"}`,
		`{"record": 2, "batch": 2, "decision": "reject", "message": "asked to reject", "error": "value is reject"}`,
		`{"record": 3, "batch": 3, "decision": "failed", "error": "interceptor failed: extension: interceptor cli: ..."}`)
	// Headers keep their order (a map would sort them).
	code, out, _ := runCapture(t, `{"value": "abc", "headers": {"b": "2", "a": null}}`+"\n", "plugin", "test", "--exec", bin, "--intercept", "produce")
	if code != 0 || !strings.Contains(out, `"headers":{"b":"2","a":null}`) {
		t.Fatalf("exit %d: %s", code, out)
	}

	// on_error = accept lets the failed batch through as produced.
	code, lines, _ = interceptLines(t, []string{`{"value": "shrink"}`}, "--exec", bin, "--intercept", "produce", "--on-error", "accept")
	if code != 0 {
		t.Fatalf("on_error accept: exit %d", code)
	}
	wantLines(t, lines, `{"record": 0, "batch": 0, "decision": "accept"}`)

	// The go-plugin schema id example, with binary values.
	schemaid := filepath.Join(t.TempDir(), "interceptor-schemaid")
	goBuild(t, schemaid, "../../examples/interceptor-schemaid")
	code, lines, errOut = interceptLines(t, []string{`{"value_b64": "AAAAAAF7fQ=="}`, `{"value_b64": "AAAAAAl7fQ=="}`},
		"--exec", schemaid, "--config", `{"allowed_ids": [1]}`, "--intercept", "produce", "--batch", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantLines(t, lines,
		`{"record": 0, "batch": 0, "decision": "accept"}`,
		`{"record": 1, "batch": 1, "decision": "reject", "message": "schema id check failed: record 0: value schema id 9 is not allowed (allowed: 1)", "error": "value schema id 9 is not allowed (allowed: 1)"}`)
}

// TestPluginTestInterceptFetch: stored records go through a fetch
// interceptor as a consumer with the given principal reads them: the
// masking example masks for one principal and not for another, a dropped
// record leaves its offset as a gap, and a failing call withholds its
// batch.
func TestPluginTestInterceptFetch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module and a plugin")
	}
	wasm := hookstest.BuildGo(t, filepath.Join("..", "..", "examples", "interceptor-mask"))
	cfg := `{"fields": ["ssn"], "allow": ["User:alice"], "mask": "****"}`
	records := []string{`{"key": "ada", "value": {"name": "Ada", "ssn": "078-05-1120"}}`, `{"value": "not json"}`, `{"value": {"name": "Bob"}}`, `{"value_b64": "/wA="}`}
	code, lines, errOut := interceptLines(t, records, "--wasm", wasm, "--config", cfg, "--intercept", "fetch", "--principal", "User:bob", "--batch", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantLines(t, lines,
		`{"offset": 0, "key": "ada", "value": {"name": "Ada", "ssn": "****"}}`,
		`{"offset": 1, "dropped": true}`,
		`{"offset": 2, "key": null, "value": {"name": "Bob"}}`,
		`{"offset": 3, "dropped": true}`)
	code, lines, errOut = interceptLines(t, records, "--wasm", wasm, "--config", cfg, "--intercept", "fetch", "--principal", "User:alice")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantLines(t, lines,
		`{"offset": 0, "key": "ada", "value": {"name": "Ada", "ssn": "078-05-1120"}}`,
		`{"offset": 1, "key": null, "value": "not json"}`,
		`{"offset": 2, "key": null, "value": {"name": "Bob"}}`,
		`{"offset": 3, "key": null, "value_b64": "/wA="}`)

	// The go-plugin test binary: a listed rejection drops that record
	// only (the others are sent as stored), and a crash withholds the
	// batch.
	bin := buildTestPlugin(t)
	code, lines, errOut = interceptLines(t, []string{`{"value": "a"}`, `{"value": "reject"}`, `{"value": "b"}`, `{"value": "crash"}`, `{"value": "c"}`},
		"--exec", bin, "--intercept", "fetch", "--batch", "3")
	if code != exitError || !strings.Contains(errOut, "failed on 1 of 2 batches") {
		t.Fatalf("exit %d, stderr %q: want an error for the crashed batch", code, errOut)
	}
	wantLines(t, lines,
		`{"offset": 0, "key": null, "value": "a"}`,
		`{"offset": 1, "dropped": true}`,
		`{"offset": 2, "key": null, "value": "b"}`,
		`{"offset": 3, "error": "interceptor failed: extension: interceptor cli: ..."}`,
		`{"offset": 4, "error": "interceptor failed: extension: interceptor cli: ..."}`)
}

func TestPluginTestInterceptErrors(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "not-a-plugin")
	if err := os.WriteFile(bin, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"bad side", "", []string{"--exec", bin, "--intercept", "both"}, exitUsage, "--intercept must be produce or fetch"},
		{"bad policy", "", []string{"--exec", bin, "--intercept", "fetch", "--on-error", "builtin"}, exitUsage, "--on-error must be reject or accept"},
		{"bad principal", "", []string{"--exec", bin, "--intercept", "fetch", "--principal", "bob"}, exitUsage, "--principal"},
		{"no topic", "", []string{"--exec", bin, "--intercept", "fetch", "--topic", ""}, exitUsage, "--topic"},
		{"exec that does not start", "", []string{"--exec", bin, "--intercept", "produce"}, exitError, "did not start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCapture(t, tc.stdin, append([]string{"plugin", "test"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

func TestParseInputRecord(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"value": 1, "extra": 2}`, `unknown field "extra"`},
		{`{"value": "a", "value_b64": "YQ=="}`, "value and value_b64 exclude each other"},
		{`{"key_b64": "!"}`, "key_b64: illegal base64"},
		{`{"headers": ["a"]}`, "headers: want an object"},
		{`{"headers": {"a": 1}}`, "headers: a: want a string or null"},
		{`[1]`, "cannot unmarshal array"},
	} {
		if _, err := parseInputRecord([]byte(tc.line), 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.line, err, tc.want)
		}
	}
	r, err := parseInputRecord([]byte(`{"key": {"a": [1, 2]}, "value": null, "timestamp": 7}`), 100)
	if err != nil || string(r.Key) != `{"a": [1, 2]}` || r.Value != nil || r.Timestamp != 7 {
		t.Fatalf("%+v, %v", r, err)
	}
	r, err = parseInputRecord([]byte(`{"value": ""}`), 100)
	if err != nil || r.Value == nil || len(r.Value) != 0 || r.Key != nil || r.Timestamp != 100 {
		t.Fatalf("empty value: %+v, %v", r, err)
	}
}
