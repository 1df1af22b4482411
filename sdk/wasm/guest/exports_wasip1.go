//go:build wasip1

package guest

import (
	"unsafe"

	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

//go:wasmexport gregor_abi_version
func exportVersion() int32 { return abi.Version }

//go:wasmexport gregor_alloc
func exportAlloc(size int32) uint32 {
	if size < 0 {
		return 0
	}
	Alloc(max(size, 1))
	return Base()
}

// Base is the guest address of the exchange buffer (0 when there is none).
func Base() uint32 {
	if cap(buf) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&buf[:1][0])))
}

// Input returns the exchange buffer range at ptr of length n, or nil.
func Input(ptr, n uint32) []byte { return Slice(Base(), ptr, n) }

//go:wasmexport gregor_configure
func exportConfigure(ptr, n uint32) int32 {
	in := Input(ptr, n)
	if in == nil && n != 0 {
		return abi.CodeBadInput
	}
	return Configure(in)
}
