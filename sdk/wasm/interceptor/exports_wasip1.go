//go:build wasip1

package interceptor

import (
	"encoding/binary"
	"unsafe"

	"github.com/gregorbroker/gregor/sdk/wasm/guest"
)

//go:wasmexport gregor_intercept
func exportIntercept(ptr, n uint32, count int32) int32 {
	buf := guest.Input(ptr, n)
	if buf == nil {
		return 1 // abi.CodeBadInput
	}
	code, d := Handle(buf, count)
	if code == 0 && len(d) > 0 {
		binary.LittleEndian.PutUint32(buf[0:], uint32(uintptr(unsafe.Pointer(&d[0]))))
	}
	return code
}
