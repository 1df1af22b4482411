package hooks

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// callWithin runs f and fails the test when it has not returned within d
// (a guest the limit does not stop keeps spinning; the test still ends).
func callWithin(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("the call did not return within %v", d)
		return nil
	}
}

// A module whose code names a global index the original does not define
// is invalid; instrumentation must not make it valid by giving that index
// to gregor_stop (or the fuel), which the guest could then clear.
func TestInstrumentRefusesGlobalsItAdds(t *testing.T) {
	ctx := context.Background()
	for name, body := range map[string][]byte{
		"clears gregor_stop": append(append([]byte{opLoop, 0x40}, append(i32c(0), 0x24, 0, opBr, 0, opEnd)...), i32c(0)...),
		"refills the fuel":   append(append([]byte{opLoop, 0x40}, append(i32c(100), 0x24, 1, opBr, 0, opEnd)...), i32c(0)...),
		"reads gregor_stop":  append([]byte{0x23, 0}, 0x1a, opI32Const, 0),
	} {
		wasm := partitionerModule(partitionFn(body))
		if _, err := instrument(wasm); err == nil {
			t.Errorf("%s: instrumented a module that names global indexes it does not define", name)
		}
		c, err := compile(ctx, wasm, KindPartitioner, Options{CallTimeout: time.Second, MemoryLimitPages: 16})
		if err == nil {
			c.close(ctx)
			t.Errorf("%s: an invalid module compiled", name)
		} else if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// recursiveFn is function 3: f(n) = n == 0 ? 0 : f(n-1) + f(n-1), 2^n
// calls and no loop.
var recursiveFn = wfunc{params: 1, results: 1, body: []byte{
	opLocalGet, 0, 0x45, 0x04, tI32, opI32Const, 0, 0x05,
	opLocalGet, 0, opI32Const, 1, 0x6b, 0x10, 3,
	opLocalGet, 0, opI32Const, 1, 0x6b, 0x10, 3,
	opI32Add, opEnd,
}}

// A call that runs long by recursion, with no loop, is stopped too.
func TestInstrumentStopsRecursionWithoutLoops(t *testing.T) {
	ctx := context.Background()
	part := partitionFn(append(append(i32c(60), 0x10, 3, 0x1a), i32c(0)...))
	wasm := wmodule{pages: 2, functions: []wfunc{versionFn(1), allocFn(1024), part, recursiveFn}}.bytes()
	path := writeModule(t, wasm)
	p, err := LoadPartitioner(ctx, path, Options{CallTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	err = callWithin(t, 5*time.Second, func() error { return p.PartitionBatch(keyed("a"), 4, make([]int32, 1)) })
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

// A start function or _initialize that never returns is stopped by the
// limit: the module fails to load instead of hanging the loader.
func TestInstrumentStopsStartFunctions(t *testing.T) {
	ctx := context.Background()
	spin := wfunc{body: []byte{opLoop, 0x40, opBr, 0, opEnd}}
	for name, m := range map[string]wmodule{
		"start section": {pages: 2, start: 4, functions: []wfunc{versionFn(1), allocFn(1024), constPartitionFn(0), spin}},
		"_initialize":   {pages: 2, functions: []wfunc{versionFn(1), allocFn(1024), constPartitionFn(0), {name: "_initialize", body: spin.body}}},
	} {
		wasm := m.bytes()
		if _, err := instrument(wasm); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		path := writeModule(t, wasm)
		err := callWithin(t, 5*time.Second, func() error {
			p, err := LoadPartitioner(ctx, path, Options{CallTimeout: 100 * time.Millisecond})
			if err == nil {
				p.Close(ctx)
			}
			return err
		})
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("%s: err = %v, want ErrTimeout", name, err)
		}
	}
}

// A start function that returns still runs, once, before the first call.
func TestInstrumentKeepsStartFunctionEffects(t *testing.T) {
	ctx := context.Background()
	// start stores 7 at address 2048; the partitioner returns load(2048)
	// as the partition of every record.
	setter := wfunc{body: append(append(i32c(2048), i32c(7)...), opI32Store, 2, 0)}
	part := partitionFn(append(append([]byte{opLocalGet, 0}, append(i32c(2048), 0x28, 2, 0)...), append([]byte{opI32Store, 2, 0}, i32c(0)...)...))
	wasm := wmodule{pages: 2, start: 4, functions: []wfunc{versionFn(1), allocFn(1024), part, setter}}.bytes()
	p, err := LoadPartitioner(ctx, writeModule(t, wasm), Options{CallTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	out := make([]int32, 1)
	if err := p.PartitionBatch(keyed("a"), 10, out); err != nil {
		t.Fatal(err)
	}
	if out[0] != 7 {
		t.Fatalf("partition = %d, want 7 (the start function's store)", out[0])
	}
}

// An instance stopped by the limit is discarded: the next call gets a
// fresh one and succeeds, and instances replaced in a loop leave no
// goroutines or timers behind.
func TestStoppedInstanceIsReplacedWithoutLeaks(t *testing.T) {
	ctx := context.Background()
	// count == 2: loop forever; otherwise every record goes to partition 1.
	body := []byte{opLocalGet, 2, opI32Const, 2, 0x46, 0x04, 0x40, opLoop, 0x40, opBr, 0, opEnd, opEnd}
	part := constPartitionFn(1)
	part.body = append(body, part.body...)
	wasm := wmodule{pages: 2, functions: []wfunc{versionFn(1), allocFn(1024), part}}.bytes()
	p, err := LoadPartitioner(ctx, writeModule(t, wasm), Options{CallTimeout: 250 * time.Millisecond}) // loading runs under it too
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	round := func() {
		if err := p.PartitionBatch(keyed("a", "b"), 4, make([]int32, 2)); !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
		out := make([]int32, 1)
		if err := p.PartitionBatch(keyed("a"), 4, out); err != nil || out[0] != 1 {
			t.Fatalf("after a stopped call: partition %d, err %v", out[0], err)
		}
	}
	round()
	before := runtime.NumGoroutine()
	for range 30 {
		round()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Fatalf("goroutines %d after 30 replaced instances, %d before", n, before)
	}
}

// A module the rewriter cannot read (here SIMD) keeps wazero's
// close-on-context-done: its infinite loop still stops at the limit.
func TestUninstrumentableModuleKeepsTheLimit(t *testing.T) {
	ctx := context.Background()
	// loop { i32.const 0; i8x16.splat; drop; br 0 }
	body := append([]byte{opLoop, 0x40, opI32Const, 0, 0xFD, 15, 0x1a, opBr, 0, opEnd}, i32c(0)...)
	wasm := partitionerModule(partitionFn(body))
	if _, err := instrument(wasm); !errors.Is(err, errUninstrumentable) {
		t.Fatalf("instrument: %v, want errUninstrumentable", err)
	}
	o := Options{CallTimeout: 100 * time.Millisecond}
	c, err := compile(ctx, wasm, KindPartitioner, o.Default())
	if err != nil {
		t.Fatal(err)
	}
	if c.stoppable {
		t.Error("a SIMD module was instrumented")
	}
	c.close(ctx)
	p, err := LoadPartitioner(ctx, writeModule(t, wasm), o)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	err = callWithin(t, 5*time.Second, func() error { return p.PartitionBatch(keyed("a"), 4, make([]int32, 1)) })
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}
