// Command interceptor-schemaid is a Gregor produce interceptor run as a
// go-plugin process: every produced record's value must be in Confluent's
// wire format (a magic byte 0, then the schema id as a 4-byte big-endian
// integer, then the encoded payload) and carry a schema id from the set
// the extension's config allows. A batch holding any other value is
// rejected whole, and the producer gets INVALID_RECORD with a message
// naming each failing record and its schema id. Null values (tombstones)
// pass; keys are checked too when the config says so.
//
// Build: go build -o interceptor-schemaid .
package main

import (
	"context"

	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/plugin"
)

func main() {
	plugin.Serve(plugin.Set{
		Interceptor: func(c plugin.Config) (interceptor.Interceptor, error) {
			var cfg Config
			if err := c.Decode(&cfg); err != nil {
				return nil, err
			}
			ch, err := New(cfg)
			if err != nil {
				return nil, err
			}
			return interceptor.Func(func(_ context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
				return ch.Decide(b), nil
			}), nil
		},
	})
}
