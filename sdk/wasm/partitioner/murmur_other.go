//go:build !(wasm || amd64 || arm64 || 386 || riscv64 || loong64 || ppc64le || mipsle || mips64le)

package partitioner

import sdkpart "github.com/gregorbroker/gregor/sdk/partitioner"

func murmur2(data []byte) uint32 { return uint32(sdkpart.Murmur2(data)) }

const littleEndian = false
