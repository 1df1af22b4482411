//go:build !wasm

package partitioner

import "encoding/binary"

// load32 reads a little-endian integer at b[off:] (load_wasm.go
// says why it exists).
func load32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
