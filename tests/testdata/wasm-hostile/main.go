// Command wasm-hostile is a partitioner module that misbehaves on request,
// for the broker's hostile-extension tests. A record's "mode" header picks
// the misbehaviour: "trap" executes an unreachable instruction, "exit"
// exits the guest, "loop" never returns, "oom" allocates until the memory
// limit stops it, "panic" panics (reported by the SDK as a guest error).
// Any other record is placed by the length of its key, so a test can tell
// the module's answer from the broker's murmur2 fallback.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o hostile.wasm .
package main

import (
	"os"
	"runtime"

	"github.com/gregorbroker/gregor/sdk/wasm/partitioner"
)

var (
	sink int
	hog  [][]byte
)

func place(r partitioner.Record, n int) int {
	for _, h := range r.Headers {
		if h.Key != "mode" {
			continue
		}
		switch string(h.Value) {
		case "trap":
			runtime.Breakpoint() // an unreachable instruction on wasm
		case "exit":
			os.Exit(3)
		case "loop":
			for i := 0; ; i++ {
				sink = i
			}
		case "oom":
			for {
				hog = append(hog, make([]byte, 1<<20))
				hog[len(hog)-1][0] = 1
			}
		case "panic":
			panic("asked to panic")
		}
	}
	return len(r.Key) % n
}

func init() {
	partitioner.Uses(partitioner.Key | partitioner.Headers)
	partitioner.Register(place)
}

func main() {}
