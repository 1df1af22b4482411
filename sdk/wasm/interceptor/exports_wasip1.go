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
//
// Reading the allocation counter (runtime/metrics) costs about 10 µs in a
// guest, 100 ns per record of a batch of 100, more than a no-op
// interceptor's decoding: so the export reads it after every call only
// while the handler allocates (over quietAlloc since the last reading),
// and otherwise after every checkEvery calls or checkBytes of input,
// whichever comes first.
const (
	gcEvery    = 4 << 20
	quietAlloc = 256 << 10
	checkEvery = 16
	checkBytes = 1 << 20
)

var (
	allocs      = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocsAtGC  uint64
	lastAllocs  uint64
	sinceCheck  int    // calls since the last reading
	bytesSince  uint32 // input bytes since the last reading
	checkAlways = true // the handler allocated lately
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
	sinceCheck++
	bytesSince += n
	if checkAlways || sinceCheck >= checkEvery || bytesSince >= checkBytes {
		collect()
	}
	return code
}

// collect reads the allocation counter and collects when the handler
// allocated over gcEvery since the last collection. The decision stays
// valid: it is reachable from the package's out.
func collect() {
	sinceCheck, bytesSince = 0, 0
	metrics.Read(allocs)
	a := allocs[0].Value.Uint64()
	checkAlways = a-lastAllocs > quietAlloc
	lastAllocs = a
	if a-allocsAtGC > gcEvery {
		runtime.GC()
		metrics.Read(allocs)
		allocsAtGC = allocs[0].Value.Uint64()
		lastAllocs = allocsAtGC
	}
}
