//go:build wasip1

package retention

import "github.com/gregorbroker/gregor/sdk/wasm/guest"

//go:wasmexport gregor_retention
func exportRetention(ptr, n uint32) int32 {
	buf := guest.Input(ptr, n)
	if buf == nil {
		return -1 // -abi.CodeBadInput
	}
	return Handle(buf)
}
