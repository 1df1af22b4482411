package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/hooks/hookstest"
	sdkinterceptor "github.com/gregorbroker/gregor/sdk/interceptor"
)

const orderSchema = `{
  "type": "object",
  "required": ["id", "qty"],
  "additionalProperties": false,
  "properties": {
    "id":    {"type": "string", "pattern": "^o-[0-9]+$"},
    "qty":   {"type": "integer", "minimum": 1},
    "tags":  {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    "ship":  {"type": "object", "properties": {"country": {"enum": ["DE", "FR"]}}}
  }
}`

func TestValidate(t *testing.T) {
	s, err := ParseSchema([]byte(orderSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doc, want string // want: "" valid, else the error's text
	}{
		{`{"id":"o-1","qty":2}`, ""},
		{`{"id":"o-1","qty":2,"tags":["a"],"ship":{"country":"FR"}}`, ""},
		{`{"id":"o-1"}`, "/qty: required property is missing"},
		{`{"id":"o-1","qty":"2"}`, `/qty: string is not of type integer`},
		{`{"id":"o-1","qty":2.5}`, `/qty: number is not of type integer`},
		{`{"id":"o-1","qty":0}`, `/qty: 0 is below the minimum 1`},
		{`{"id":"x","qty":1}`, `/id: "x" does not match "^o-[0-9]+$"`},
		{`{"id":"o-1","qty":1,"tags":["a",3]}`, `/tags/1: integer is not of type string`},
		{`{"id":"o-1","qty":1,"ship":{"country":"US"}}`, `/ship/country: "US" is not one of the allowed values`},
		{`{"id":"o-1","qty":1,"extra":true}`, `/extra: additional property is not allowed`},
		{`[1]`, `/: array is not of type object`},
	} {
		err := s.Validate([]byte(tc.doc))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.doc, got, tc.want)
		}
	}
	if err := s.Validate([]byte(`{"id":`)); !errors.Is(err, errNotJSON) {
		t.Errorf("truncated JSON: %v", err)
	}
	if _, err := ParseSchema([]byte(`{"oneOf":[]}`)); err == nil || !strings.Contains(err.Error(), `keyword "oneOf" is not supported`) {
		t.Errorf("unsupported keyword: %v", err)
	}
}

// TestModule runs the built module through the broker's host.
func TestModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module")
	}
	wasm := hookstest.BuildGo(t, ".")
	ctx := context.Background()
	cfg, _ := json.Marshal(map[string]any{"schema": json.RawMessage(orderSchema)})
	ic, err := hooks.LoadInterceptor(ctx, wasm, hooks.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close(ctx)
	if v := ic.Module().Info().ABIVersion; v != 2 {
		t.Errorf("ABI version %d, want 2", v)
	}
	batch := &sdkinterceptor.Batch{Topic: "orders", Records: []sdkinterceptor.Record{
		{Value: []byte(`{"id":"o-1","qty":2}`)},
		{Value: nil}, // a tombstone passes
		{Value: []byte(`{"id":"o-2","qty":"2"}`), OffsetDelta: 2},
	}}
	d, err := ic.InterceptProduce(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != sdkinterceptor.Reject || len(d.Errors) != 1 || d.Errors[0].Index != 2 ||
		d.Errors[0].Message != "/qty: string is not of type integer" || !strings.Contains(d.Message, "record 2: /qty") {
		t.Fatalf("decision %+v", d)
	}
	batch.Records = batch.Records[:2]
	if d, err := ic.InterceptProduce(ctx, batch); err != nil || d.Action != sdkinterceptor.Accept {
		t.Fatalf("valid batch: %+v, %v", d, err)
	}
	// A schema the module cannot check keeps the module from loading.
	bad, _ := json.Marshal(map[string]any{"schema": map[string]any{"anyOf": []any{}}})
	if _, err := hooks.LoadInterceptor(ctx, wasm, hooks.Options{Config: bad}); !errors.Is(err, hooks.ErrConfig) {
		t.Fatalf("unsupported schema: %v", err)
	}
}

// TestModuleSustainedLoad validates far more JSON than the module's memory
// holds: the guest must collect its garbage between calls.
func TestModuleSustainedLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a WebAssembly module")
	}
	ctx := context.Background()
	cfg, _ := json.Marshal(map[string]any{"schema": json.RawMessage(orderSchema)})
	ic, err := hooks.LoadInterceptor(ctx, hookstest.BuildGo(t, "."), hooks.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close(ctx)
	value := []byte(`{"id":"o-1","qty":2,"tags":["` + strings.Repeat("x", 1000) + `"]}`)
	batch := &sdkinterceptor.Batch{Topic: "orders", Records: make([]sdkinterceptor.Record, 100)}
	for i := range batch.Records {
		batch.Records[i].Value = value
	}
	for i := range 300 { // about 30 MB of JSON through 64 MiB of guest memory
		if d, err := ic.InterceptProduce(ctx, batch); err != nil || d.Action != sdkinterceptor.Accept {
			t.Fatalf("call %d: %+v, %v", i, d, err)
		}
	}
}
