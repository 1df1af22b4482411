// Package abi is Gregor's WebAssembly extension ABI, version 2, as plain Go:
// export names, error codes and the little-endian encodings of the inputs
// the host writes into guest memory. The broker's host (hooks) encodes with
// it and the guest helpers in sdk/wasm decode with it, so both sides share
// one definition. hooks/ABI.md in the broker repository is the prose
// specification for authors in other languages.
//
// Decoders never trust their input: every length is checked against the
// bytes that remain before anything is sliced or allocated, and a short or
// inconsistent buffer yields ErrMalformed.
package abi

import "errors"

// Version is the ABI version this package speaks and gregor_abi_version of
// a module built with it returns. Version 2 added the interceptor kind and
// changed nothing else, so a host speaking 2 also loads modules of
// MinVersion.
const Version = 2

// MinVersion is the oldest ABI version a host speaking Version loads.
const MinVersion = 1

// InterceptorVersion is the first ABI version with gregor_intercept.
const InterceptorVersion = 2

// Export names. A module must export "memory", ExportVersion, ExportAlloc
// and at least one of the kind exports.
const (
	ExportMemory       = "memory"
	ExportVersion      = "gregor_abi_version"   // () -> i32
	ExportAlloc        = "gregor_alloc"         // (size i32) -> ptr i32
	ExportConfigure    = "gregor_configure"     // (ptr, len i32) -> code i32 (optional)
	ExportRecordFields = "gregor_record_fields" // () -> fields i32 (optional)
	ExportPartition    = "gregor_partition"     // (ptr, len, count, partitions i32) -> code i32
	ExportRetention    = "gregor_retention"     // (ptr, len i32) -> count or -code i32
	ExportAuthorize    = "gregor_authorize"     // (ptr, len, count i32) -> code i32
	ExportIntercept    = "gregor_intercept"     // (ptr, len, count i32) -> code i32 (ABI 2)
)

// Result codes a guest returns. Anything else is an unknown code, which the
// host reports as a guest failure.
const (
	OK            = 0
	CodeBadInput  = 1 // the guest could not decode its input
	CodeConfig    = 2 // gregor_configure rejected the configuration
	CodeFailed    = 3 // the extension failed; the fallback applies
	CodeNoHandler = 4 // the module exports the kind but registered no handler
)

// Record fields a partitioner asks for (gregor_record_fields). A field left
// out is encoded as null, which saves copying values the partitioner never
// reads.
const (
	FieldKey     = 1
	FieldValue   = 2
	FieldHeaders = 4
	AllFields    = FieldKey | FieldValue | FieldHeaders
)

// ErrMalformed marks input that does not follow the encoding.
var ErrMalformed = errors.New("abi: malformed input")

// SlotsSize is the size of the output area at the start of a partition
// (4 bytes per record) or authorize (1 byte per action, padded to 4) buffer.
func SlotsSize(count int, width int) int {
	return (count*width + 3) &^ 3
}
