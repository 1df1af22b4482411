// Command intercept is a test interceptor guest whose behaviour its
// configuration selects, to exercise the broker's failure handling:
// {"mode": "upper" | "accept" | "loop" | "exit" | "shrink" | "oom"}. upper
// rewrites every value to upper case and adds a header, accept accepts
// every batch (a no-op, for benchmarks); the others misbehave.
package main

import (
	"bytes"
	"encoding/json"
	"os"

	"github.com/gregorbroker/gregor/sdk/wasm/guest"
	"github.com/gregorbroker/gregor/sdk/wasm/interceptor"
)

var (
	mode string
	sink [][]byte
)

func init() {
	guest.OnConfigure(func(c []byte) error {
		var cfg struct{ Mode string }
		if err := json.Unmarshal(c, &cfg); err != nil {
			return err
		}
		mode = cfg.Mode
		return nil
	})
	interceptor.Register(func(b *interceptor.Batch) interceptor.Decision {
		switch mode {
		case "loop":
			for {
			}
		case "exit":
			os.Exit(3)
		case "oom":
			for {
				sink = append(sink, make([]byte, 1<<20))
			}
		case "shrink":
			return interceptor.Decision{Action: interceptor.Rewrite}
		case "accept":
			return interceptor.Decision{}
		}
		out := make([]interceptor.Record, len(b.Records))
		for i, r := range b.Records {
			out[i] = interceptor.Record{Key: r.Key, Value: bytes.ToUpper(r.Value),
				Headers: append(append([]interceptor.Header{}, r.Headers...), interceptor.Header{Key: "intercepted", Value: []byte(b.Principal.Name)})}
		}
		return interceptor.Decision{Action: interceptor.Rewrite, Records: out}
	})
}

func main() {}
