package hooks

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/gregorbroker/gregor/hooks/hookstest"
)

// TestInstrumentedModulesStopWithinTheLimit checks that the Go and
// AssemblyScript guests and a hand-made loop are instrumented (their calls
// limited by the watchdog, not wazero's per-iteration check) and that an
// infinite loop in each stops within the limit, leaving the module usable.
func TestInstrumentedModulesStopWithinTheLimit(t *testing.T) {
	ctx := context.Background()
	for _, path := range []string{
		hookstest.BuildGo(t, "testdata/murmur"),
		hookstest.BuildAssemblyScript(t, "../examples/wasm-murmur2-as", "build/murmur2.wasm"),
	} {
		wasm, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := instrument(wasm); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		c, err := compile(ctx, wasm, KindPartitioner, Options{CallTimeout: time.Second, MemoryLimitPages: 1024})
		if err != nil {
			t.Fatal(err)
		}
		if !c.stoppable {
			t.Errorf("%s: not instrumented", path)
		}
		c.close(ctx)
	}
	p, err := LoadPartitioner(ctx, hookstest.BuildGo(t, "testdata/murmur"), Options{CallTimeout: 3 * time.Second, Config: []byte(`{"mode":"loop"}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	start := time.Now()
	err = p.PartitionBatch(keyed("a"), 4, make([]int32, 1))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the loop stopped after %v, limit 3s", took)
	}
	// The broker's deadline reaches the guest too.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	err = p.PartitionBatchContext(cctx, keyed("a"), 4, make([]int32, 1))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 1500*time.Millisecond { // the call's own limit is 3s
		t.Errorf("the loop stopped after %v, deadline 50ms", took)
	}
	// A canceled context stops the call too.
	cctx, cancel = context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := p.PartitionBatchContext(cctx, keyed("a"), 4, make([]int32, 1)); err == nil || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want the call canceled", err)
	}
}

func TestAppendSleb(t *testing.T) {
	for v, want := range map[int64][]byte{0: {0}, 63: {0x3F}, 64: {0xC0, 0x00}, 4096: {0x80, 0x20}, -1: {0x7F}, 10000: {0x90, 0xCE, 0x00}} {
		if got := appendSleb(nil, v); string(got) != string(want) {
			t.Errorf("%d: % x, want % x", v, got, want)
		}
	}
}
