// Package interceptor is the guest side of a WebAssembly record
// interceptor: a Go module registers a function from batch to decision, and
// this package exports gregor_intercept (ABI 2), which decodes the batch
// from the exchange buffer, calls the function once per batch and writes the
// encoded decision into a guest-owned buffer whose address and length it
// puts in the call's output slots. It owns the encoding, never the policy.
package interceptor

import (
	"encoding/binary"

	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

// Batch, Record, Header, Decision and RecordError are the sdk's types.
type (
	Batch       = interceptor.Batch
	Record      = interceptor.Record
	Header      = interceptor.Header
	Decision    = interceptor.Decision
	RecordError = interceptor.RecordError
)

// Actions.
const (
	Accept  = interceptor.Accept
	Reject  = interceptor.Reject
	Rewrite = interceptor.Rewrite
)

var (
	handler func(b *Batch) Decision
	dec     abi.BatchDecoder
	out     []byte // the encoded decision; guest-owned, reused between calls
)

// Register makes fn the module's interceptor. The batch's slices alias the
// exchange buffer: copy anything kept past the call. A panic in fn fails
// the call and the broker applies the extension's on_error policy. Call
// Register from an init function.
func Register(fn func(b *Batch) Decision) { handler = fn }

// Handle runs the registered interceptor over buf (the output slots, then
// the encoded batch of count records). It returns an ABI result code and
// the encoded decision, which stays valid until the next Handle; on OK it
// has also written the decision's length into the slots (the export writes
// its address).
func Handle(buf []byte, count int32) (code int32, decision []byte) {
	if handler == nil {
		return abi.CodeNoHandler, nil
	}
	if count < 0 || len(buf) < abi.InterceptSlots {
		return abi.CodeBadInput, nil
	}
	b, err := dec.Decode(buf[abi.InterceptSlots:], int(count))
	if err != nil {
		return abi.CodeBadInput, nil
	}
	defer func() {
		if recover() != nil {
			code, decision = abi.CodeFailed, nil
		}
	}()
	d := handler(b)
	if err := interceptor.Check(&d, len(b.Records)); err != nil {
		return abi.CodeFailed, nil
	}
	n := abi.DecisionSize(&d)
	if cap(out) < n {
		out = make([]byte, n)
	}
	out = out[:n]
	abi.PutDecision(out, &d)
	binary.LittleEndian.PutUint32(buf[4:], uint32(n))
	return abi.OK, out
}
