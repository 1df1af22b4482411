// Package retention is the guest side of a WebAssembly retention policy: a
// Go module registers a function from partition facts to the number of
// leading segments that may be deleted, and this package exports
// gregor_retention, which decodes the facts from the exchange buffer.
package retention

import (
	"github.com/gregorbroker/gregor/sdk/retention"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

var handler func(p retention.Partition) int

// Register makes fn the module's retention policy. Call it from an init
// function.
func Register(fn func(p retention.Partition) int) { handler = fn }

// Handle decodes the facts in buf and runs the policy. It returns the
// policy's count, or a negated ABI result code; a panic yields -CodeFailed.
func Handle(buf []byte) (result int32) {
	if handler == nil {
		return -abi.CodeNoHandler
	}
	p, err := abi.DecodePartition(buf)
	if err != nil {
		return -abi.CodeBadInput
	}
	defer func() {
		if recover() != nil {
			result = -abi.CodeFailed
		}
	}()
	n := handler(p)
	if n < 0 || n > 1<<30 {
		return -abi.CodeFailed
	}
	return int32(n)
}
