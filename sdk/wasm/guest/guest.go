// Package guest owns what every Gregor WebAssembly module exports whatever
// its kind: the ABI version marker (gregor_abi_version), the guest-owned
// exchange buffer (gregor_alloc) and the configuration call
// (gregor_configure). Kind packages (partitioner, authorizer, retention)
// import it; extension authors only need Config and OnConfigure.
package guest

import "github.com/gregorbroker/gregor/sdk/wasm/abi"

// buf is the exchange buffer: the host asks for it with gregor_alloc, writes
// a call's input into it and reads the call's output back. It stays valid
// until the next gregor_alloc. A module is single-threaded, so no lock.
var buf []byte

// Alloc returns a buffer of at least size bytes, reusing the previous one
// when it is large enough. It returns nil for a negative size.
func Alloc(size int32) []byte {
	if size < 0 {
		return nil
	}
	if int(size) > cap(buf) {
		buf = make([]byte, size)
	}
	buf = buf[:cap(buf)]
	return buf[:size]
}

// Buffer returns the current exchange buffer.
func Buffer() []byte { return buf }

var (
	config      []byte
	onConfigure func(config []byte) error
)

// Config returns the configuration the broker passed to the module: the
// extension's `config` table from broker.toml as a JSON object ("{}" when
// there is none). It is nil until the host configured the module.
func Config() []byte { return config }

// OnConfigure registers fn to validate and apply the configuration. An
// error from fn makes the host refuse to load the module, naming the error.
// Call it from an init function.
func OnConfigure(fn func(config []byte) error) { onConfigure = fn }

// Configure applies a configuration; it is what gregor_configure calls.
func Configure(c []byte) int32 {
	config = append([]byte(nil), c...)
	if onConfigure != nil {
		if err := onConfigure(config); err != nil {
			return abi.CodeConfig
		}
	}
	return abi.OK
}

// Slice returns the part of the exchange buffer at guest address ptr of
// length n, or nil when that range is not inside the buffer. base is the
// buffer's own address.
func Slice(base, ptr, n uint32) []byte {
	if ptr < base || n > uint32(len(buf)) || ptr-base > uint32(len(buf))-n {
		return nil
	}
	off := ptr - base
	return buf[off : off+n]
}
