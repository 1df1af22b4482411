//go:build wasip1

package authorizer

import "github.com/gregorbroker/gregor/sdk/wasm/guest"

//go:wasmexport gregor_authorize
func exportAuthorize(ptr, n uint32, count int32) int32 {
	buf := guest.Input(ptr, n)
	if buf == nil {
		return 1 // abi.CodeBadInput
	}
	return Handle(buf, count)
}
