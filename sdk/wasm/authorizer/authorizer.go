// Package authorizer is the guest side of a WebAssembly authorizer: a Go
// module registers a function from an action to a decision, and this
// package exports gregor_authorize, which decodes a batch of actions from
// the exchange buffer and writes one decision byte per action back.
package authorizer

import (
	"github.com/gregorbroker/gregor/sdk/auth"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

var handler func(a auth.Action) auth.Decision

// Register makes fn the module's authorizer. The strings of an action
// alias the exchange buffer: copy anything kept past the call. Call
// Register from an init function.
func Register(fn func(a auth.Action) auth.Decision) { handler = fn }

// Handle runs the registered authorizer over an encoded batch: the first
// count bytes of buf (padded to 4) receive the decisions, the actions
// follow. It returns an ABI result code; a panic yields CodeFailed.
func Handle(buf []byte, count int32) (code int32) {
	if handler == nil {
		return abi.CodeNoHandler
	}
	slots := abi.SlotsSize(int(count), 1)
	if count < 0 || slots > len(buf) {
		return abi.CodeBadInput
	}
	defer func() {
		if recover() != nil {
			code = abi.CodeFailed
		}
	}()
	out := buf[:slots]
	err := abi.DecodeActions(buf[slots:], int(count), func(i int, a auth.Action) error {
		out[i] = byte(handler(a))
		return nil
	})
	if err != nil {
		return abi.CodeBadInput
	}
	return abi.OK
}
