//go:build wasm || amd64 || arm64 || 386 || riscv64 || loong64 || ppc64le || mipsle || mips64le

package partitioner

import "unsafe"

const littleEndian = true

// murmur2 is sdk/partitioner.Murmur2 with each 4-byte block read by one
// little-endian load: the Go wasm compiler neither combines byte loads nor
// drops their bounds checks, and the hash is most of a key partitioner's
// time in a guest.
func murmur2(data []byte) uint32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
	)
	n := len(data)
	h := seed ^ uint32(n)
	if n == 0 {
		return mix(h)
	}
	p := unsafe.Pointer(unsafe.SliceData(data))
	i := 0
	for ; n-i >= 4; i += 4 {
		k := *(*uint32)(unsafe.Add(p, i))
		k *= m
		k ^= k >> 24
		k *= m
		h *= m
		h ^= k
	}
	switch n - i {
	case 3:
		h ^= uint32(*(*byte)(unsafe.Add(p, i+2))) << 16
		fallthrough
	case 2:
		h ^= uint32(*(*byte)(unsafe.Add(p, i+1))) << 8
		fallthrough
	case 1:
		h ^= uint32(*(*byte)(unsafe.Add(p, i)))
		h *= m
	}
	return mix(h)
}

func mix(h uint32) uint32 {
	const m uint32 = 0x5bd1e995
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
