// Package wasm is the guest side of Gregor's WebAssembly extensions, for
// modules written in Go and built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o ext.wasm .
//
// Import one of the kind packages and register a handler from an init
// function (a c-shared module's main never runs):
//
//   - sdk/wasm/partitioner: Register(func(r Record, n int) int), or
//     RegisterBatch(func(records []Record, n int32, out []int32) error),
//     one call per batch and the fastest form in a Go guest
//   - sdk/wasm/interceptor: Register(func(b *Batch) Decision)
//   - sdk/wasm/authorizer: Register(func(a auth.Action) auth.Decision)
//   - sdk/wasm/retention: Register(func(p retention.Partition) int)
//
// sdk/wasm/guest holds what every module exports (the ABI version marker,
// the buffer allocator and configuration), and sdk/wasm/abi the encodings.
// None of these packages depends on a WebAssembly runtime; the exports exist
// only in wasip1 builds, and elsewhere the packages compile so that handlers
// can be unit-tested natively.
package wasm
