//go:build wasm

package abi

import "unsafe"

// load32 and load64 read little-endian integers at b[off:] with one load
// each: the Go wasm compiler turns binary.LittleEndian's byte loads into
// as many loads, shifts and ors, which is most of a record's decoding in a
// guest. The caller has checked that the bytes are in b (wasm allows
// unaligned loads).
func load32(b []byte, off int) uint32 { return *(*uint32)(unsafe.Pointer(&b[off])) }

func load64(b []byte, off int) uint64 { return *(*uint64)(unsafe.Pointer(&b[off])) }
