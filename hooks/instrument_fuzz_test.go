package hooks

import (
	"context"
	"os"
	"testing"

	"github.com/gregorbroker/gregor/hooks/hookstest"
	"github.com/tetratelabs/wazero"
)

// FuzzInstrument feeds the rewriter arbitrary bytes, seeded with the
// hooks/testdata guests and the generated test modules. It must not panic
// or loop, its output stays within maxGrowth of the input, and it never
// turns a module wazero refuses into one wazero accepts (the guest could
// then name the globals instrument adds).
func FuzzInstrument(f *testing.F) {
	for _, dir := range []string{"testdata/murmur", "testdata/fail", "testdata/intercept"} {
		wasm, err := os.ReadFile(hookstest.BuildGo(f, dir))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(wasm)
	}
	spin := wfunc{body: []byte{opLoop, 0x40, opBr, 0, opEnd}}
	for _, m := range []wmodule{
		{pages: 2, functions: []wfunc{versionFn(1), allocFn(1024), constPartitionFn(3)}},
		{pages: 2, start: 4, functions: []wfunc{versionFn(1), allocFn(1024), partitionFn(loopBody), spin}},
		{pages: 1, functions: []wfunc{versionFn(1), allocFn(1024), partitionFn(memoryBlowUp), recursiveFn}},
		{noMemory: true, functions: []wfunc{versionFn(1), partitionFn(trapBody)}},
	} {
		f.Add(m.bytes())
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	valid := func(wasm []byte) bool {
		code, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			return false
		}
		code.Close(ctx)
		return true
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, err := instrument(wasm)
		if err != nil {
			return
		}
		if len(out) > maxGrowth*len(wasm)+64<<10 {
			t.Fatalf("%d bytes in, %d out", len(wasm), len(out))
		}
		if len(wasm) <= 16<<10 && valid(out) && !valid(wasm) {
			t.Fatalf("instrument made an invalid module valid")
		}
	})
}
