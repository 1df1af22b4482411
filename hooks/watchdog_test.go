package hooks

import (
	"context"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// stopFlag instantiates an instrumented module and returns its
// gregor_stop global.
func stopFlag(t *testing.T) api.MutableGlobal {
	ctx := context.Background()
	wasm, err := instrument(partitionerModule(constPartitionFn(0)))
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	return mod.ExportedGlobal(stopGlobal).(api.MutableGlobal)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A call that overruns is stopped; the flag is clear for the next call;
// a late timer firing or a late cancellation of an earlier call does not
// stop a later one.
func TestWatchdogGenerations(t *testing.T) {
	w := newWatchdog(stopFlag(t))
	// The flag is read under the watchdog's lock, as its writes are (the
	// guest's own reads are native code, outside the race detector).
	get := func() uint64 { w.mu.Lock(); defer w.mu.Unlock(); return w.stop.Get() }
	gen := w.begin(time.Millisecond)
	waitFor(t, "the stop of an overrunning call", func() bool { return get() == 1 })
	if r := w.end(); r != stoppedByLimit {
		t.Fatalf("reason %d, want stoppedByLimit", r)
	}
	w.begin(time.Hour)
	if get() != 0 {
		t.Fatal("the flag is still set at the next call")
	}
	w.expire()    // a firing of the earlier call's timer, late
	w.cancel(gen) // the earlier call's context ends, late
	if get() != 0 {
		t.Fatal("a late stop of an earlier call stopped this one")
	}
	if r := w.end(); r != notStopped {
		t.Fatalf("reason %d, want notStopped", r)
	}
	// Between calls nothing is stopped.
	w.expire()
	w.cancel(gen + 1)
	if get() != 0 {
		t.Fatal("a stop between calls set the flag")
	}
	// A call that ends exactly as its limit passes either finished (its
	// result stands) or was stopped, and the next call starts clear.
	w.begin(0)
	waitFor(t, "a zero limit", func() bool { return get() == 1 })
	w.end()
	w.begin(time.Hour)
	if get() != 0 {
		t.Fatal("the flag is still set after a call stopped at its deadline")
	}
	w.end()
}
