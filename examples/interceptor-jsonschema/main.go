// Command interceptor-jsonschema is a Gregor record interceptor module in
// Go: every produced record's value must be a JSON document matching the
// JSON Schema given in the extension's config, or the batch is rejected
// and the producer gets INVALID_RECORD naming each failing record and the
// JSON Pointer of the first failing field ("/qty: \"3\" is not of type
// integer"). Null values (tombstones) pass; see schema.go for the schema
// keywords checked.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o jsonschema.wasm .
package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/sdk/wasm/guest"
	"github.com/gregorbroker/gregor/sdk/wasm/interceptor"
)

var schema *Schema

type config struct {
	// Schema is the JSON Schema, as a table or as a string holding JSON.
	Schema json.RawMessage `json:"schema"`
}

func configure(raw []byte) error {
	var c config
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("jsonschema: config: %w", err)
	}
	if len(c.Schema) == 0 {
		return errors.New("jsonschema: config: schema is missing")
	}
	doc := []byte(c.Schema)
	var s string
	if json.Unmarshal(c.Schema, &s) == nil {
		doc = []byte(s) // given as a string of JSON
	}
	sc, err := ParseSchema(doc)
	if err != nil {
		return fmt.Errorf("jsonschema: config: %w", err)
	}
	schema = sc
	return nil
}

// intercept rejects the batch when any record's value fails the schema,
// listing every failing record.
func intercept(b *interceptor.Batch) interceptor.Decision {
	var errs []interceptor.RecordError
	for i, r := range b.Records {
		if r.Value == nil {
			continue
		}
		if err := schema.Validate(r.Value); err != nil {
			errs = append(errs, interceptor.RecordError{Index: int32(i), Message: err.Error()})
		}
	}
	if len(errs) == 0 {
		return interceptor.Decision{}
	}
	msg := fmt.Sprintf("record %d: %s", errs[0].Index, errs[0].Message)
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return interceptor.Decision{Action: interceptor.Reject, Message: "value does not match the topic's JSON Schema: " + msg, Errors: errs}
}

func init() {
	guest.OnConfigure(configure)
	interceptor.Register(intercept)
}

func main() {}
