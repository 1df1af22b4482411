// Command murmur is a test guest: Kafka's murmur2 placement of keys, with
// behaviours selected by the module's configuration to exercise the host's
// failure handling: {"mode": "panic" | "zero" | "loop" | "oom" | "range" | "exit"}.
package main

import (
	"encoding/json"
	"os"

	"github.com/gregorbroker/gregor/sdk/wasm/guest"
	"github.com/gregorbroker/gregor/sdk/wasm/partitioner"
)

var mode string

var sink [][]byte

func init() {
	partitioner.Uses(partitioner.Key)
	guest.OnConfigure(func(c []byte) error {
		var cfg struct{ Mode string }
		if err := json.Unmarshal(c, &cfg); err != nil {
			return err
		}
		if cfg.Mode == "reject" {
			return os.ErrInvalid
		}
		mode = cfg.Mode
		return nil
	})
	partitioner.Register(func(r partitioner.Record, n int) int {
		switch mode {
		case "loop":
			for {
			}
		case "oom":
			for {
				sink = append(sink, make([]byte, 1<<20))
			}
		case "zero":
			return 0
		case "range":
			return n
		case "exit":
			os.Exit(3)
		case "panic":
			if string(r.Key) == "boom" {
				panic("boom")
			}
		}
		return partitioner.KeyPartition(r.Key, n)
	})
}

func main() {}
