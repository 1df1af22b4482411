package hooks

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gregorbroker/gregor/sdk/interceptor"
	"github.com/gregorbroker/gregor/sdk/wasm/abi"
)

// ErrBadDecision: an interceptor's answer does not decode or does not fit
// its batch (another record count, a record error outside the batch).
var ErrBadDecision = errors.New("interceptor answer is unusable")

// Interceptor is a WebAssembly record interceptor (ABI 2): it implements
// the sdk's interceptor.Interceptor with one guest call per batch. It has
// no fallback: the broker applies the extension's on_error policy.
type Interceptor struct {
	m *Module
}

// LoadInterceptor loads the interceptor module at path.
func LoadInterceptor(ctx context.Context, path string, o Options) (*Interceptor, error) {
	m, err := Load(ctx, path, KindInterceptor, o)
	if err != nil {
		return nil, err
	}
	return &Interceptor{m: m}, nil
}

// Module returns the underlying module (Reload, Watch, Info, Close).
func (ic *Interceptor) Module() *Module { return ic.m }

// Close closes the module.
func (ic *Interceptor) Close(ctx context.Context) error { return ic.m.Close(ctx) }

// InterceptProduce implements interceptor.Interceptor. The decision it
// returns owns its memory (nothing aliases the guest) and passed
// interceptor.Check.
func (ic *Interceptor) InterceptProduce(ctx context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
	d, err := ic.run(ctx, b)
	if err != nil {
		return interceptor.Decision{}, fmt.Errorf("hooks: interceptor %s: %w", ic.m.path, err)
	}
	return d, nil
}

func (ic *Interceptor) run(ctx context.Context, b *interceptor.Batch) (interceptor.Decision, error) {
	g, in, err := ic.m.acquire(ctx)
	if err != nil {
		return interceptor.Decision{}, err
	}
	var failed error
	defer func() { ic.m.put(ctx, g, in, failed) }()
	d, err := ic.call(ctx, in, b)
	if err != nil && isInstanceFailure(err) && !errors.Is(err, ErrBadDecision) {
		failed = err
	}
	return d, err
}

func (ic *Interceptor) call(ctx context.Context, in *instance, b *interceptor.Batch) (interceptor.Decision, error) {
	size := abi.InterceptSlots + abi.BatchSize(b)
	view, err := in.buffer(ctx, size, ic.m.opts)
	if err != nil {
		return interceptor.Decision{}, err
	}
	clear(view[:abi.InterceptSlots])
	abi.PutBatch(view[abi.InterceptSlots:], b)
	in.stack[0], in.stack[1], in.stack[2] = uint64(in.bufPtr), uint64(size), uint64(len(b.Records))
	if err := in.invoke(ctx, in.fn, ic.m.opts); err != nil {
		return interceptor.Decision{}, err
	}
	if code := int32(in.stack[0]); code != abi.OK {
		return interceptor.Decision{}, &GuestError{Code: code}
	}
	slots, err := in.output(abi.InterceptSlots)
	if err != nil {
		return interceptor.Decision{}, err
	}
	ptr, n := binary.LittleEndian.Uint32(slots), binary.LittleEndian.Uint32(slots[4:])
	if n > uint32(ic.m.opts.MaxCallBytes) {
		return interceptor.Decision{}, fmt.Errorf("%w: answer of %d bytes, limit %d", ErrBadDecision, n, ic.m.opts.MaxCallBytes)
	}
	raw, ok := in.mem.Read(ptr, n)
	if !ok {
		return interceptor.Decision{}, fmt.Errorf("%w: answer of %d bytes at %#x is outside memory (%d bytes)", ErrBadDecision, n, ptr, in.mem.Size())
	}
	d, err := abi.DecodeDecision(raw, len(b.Records))
	if err != nil {
		return interceptor.Decision{}, fmt.Errorf("%w: %w", ErrBadDecision, err)
	}
	if err := interceptor.Check(&d, len(b.Records)); err != nil {
		return interceptor.Decision{}, fmt.Errorf("%w: %w", ErrBadDecision, err)
	}
	if d.Action == interceptor.Rewrite {
		ownRecords(d.Records, b.Records)
	}
	return d, nil
}

// ownRecords copies rewritten records out of guest memory into one arena
// and carries over each original's timestamp and offset delta, which a
// rewrite cannot change.
func ownRecords(recs, orig []interceptor.Record) {
	size, nh := 0, 0
	for i := range recs {
		size += len(recs[i].Key) + len(recs[i].Value)
		for _, h := range recs[i].Headers {
			size += len(h.Key) + len(h.Value)
		}
		nh += len(recs[i].Headers)
	}
	arena := make([]byte, 0, size)
	headers := make([]interceptor.Header, 0, nh)
	own := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		start := len(arena)
		arena = append(arena, b...)
		return arena[start:len(arena):len(arena)]
	}
	for i := range recs {
		r := &recs[i]
		r.Key, r.Value = own(r.Key), own(r.Value)
		first := len(headers)
		for _, h := range r.Headers {
			headers = append(headers, interceptor.Header{Key: string(h.Key), Value: own(h.Value)})
		}
		if len(r.Headers) > 0 {
			r.Headers = headers[first:len(headers):len(headers)]
		}
		r.Timestamp, r.OffsetDelta = orig[i].Timestamp, orig[i].OffsetDelta
	}
}
