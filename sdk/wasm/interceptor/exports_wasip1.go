//go:build wasip1

package interceptor

import (
	"encoding/binary"
	"runtime"
	"runtime/metrics"
	"unsafe"

	"github.com/gregorbroker/gregor/sdk/wasm/guest"
)

// A Go guest runs only during exported calls, and the collector's
// background workers are goroutines that then never run: a cycle started
// by an allocation does not finish, and the heap grows to the memory limit.
// So after a call that brought the bytes allocated since the last
// collection over gcEvery, the export collects itself.
const gcEvery = 4 << 20

var (
	allocs     = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocsAtGC uint64
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
	metrics.Read(allocs)
	if a := allocs[0].Value.Uint64(); a-allocsAtGC > gcEvery {
		runtime.GC() // d stays valid: it is reachable from the package's out
		metrics.Read(allocs)
		allocsAtGC = allocs[0].Value.Uint64()
	}
	return code
}
