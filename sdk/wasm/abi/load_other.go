//go:build !wasm

package abi

import "encoding/binary"

// load32 and load64 read little-endian integers at b[off:] (load_wasm.go
// says why they exist).
func load32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

func load64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
