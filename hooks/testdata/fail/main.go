// Command fail is a test guest that exports a partitioner, a retention
// policy, an authorizer and an interceptor, each of which panics on every
// call: the broker's fallback and statistics for a failing module are
// tested with it.
package main

import (
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/retention"
	"github.com/gregorbroker/gregor/sdk/wasm/authorizer"
	"github.com/gregorbroker/gregor/sdk/wasm/interceptor"
	"github.com/gregorbroker/gregor/sdk/wasm/partitioner"
	wasmretention "github.com/gregorbroker/gregor/sdk/wasm/retention"
)

func init() {
	partitioner.Register(func(partitioner.Record, int) int { panic("partitioner asked to fail") })
	wasmretention.Register(func(retention.Partition) int { panic("retention asked to fail") })
	authorizer.Register(func(auth.Action) auth.Decision { panic("authorizer asked to fail") })
	interceptor.Register(func(*interceptor.Batch) interceptor.Decision { panic("interceptor asked to fail") })
}

func main() {}
