//go:build wasm

package partitioner

import "unsafe"

// load32 reads a little-endian integer at b[off:] with one load: the Go
// wasm compiler turns binary.LittleEndian's byte loads into as many loads,
// shifts and ors, which is most of a record's decoding in a guest. The caller has checked that the bytes are in b (wasm allows
// unaligned loads).
func load32(b []byte, off int) uint32 { return *(*uint32)(unsafe.Pointer(&b[off])) }
