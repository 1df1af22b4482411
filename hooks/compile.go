package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/gregorbroker/gregor/sdk/wasm/abi"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

var wasmMagic = []byte{0x00, 'a', 's', 'm'}

// signatures of the ABI's exports: params, then results.
type signature struct{ params, results []api.ValueType }

var (
	i32 = api.ValueTypeI32

	sigs = map[string]signature{
		abi.ExportVersion:      {nil, []api.ValueType{i32}},
		abi.ExportAlloc:        {[]api.ValueType{i32}, []api.ValueType{i32}},
		abi.ExportConfigure:    {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
		abi.ExportRecordFields: {nil, []api.ValueType{i32}},
		abi.ExportPartition:    {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}},
		abi.ExportRetention:    {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
		abi.ExportAuthorize:    {[]api.ValueType{i32, i32, i32}, []api.ValueType{i32}},
		abi.ExportIntercept:    {[]api.ValueType{i32, i32, i32}, []api.ValueType{i32}},
	}
	kindExport = map[Kind]string{
		KindPartitioner: abi.ExportPartition,
		KindRetention:   abi.ExportRetention,
		KindAuthorizer:  abi.ExportAuthorize,
		KindInterceptor: abi.ExportIntercept,
	}
)

// compiled is one compilation of a module's bytes in its own runtime (the
// runtime carries the memory limit and the close-on-context-done setting).
type compiled struct {
	rt   wazero.Runtime
	code wazero.CompiledModule
	info Info
	// stoppable: the code was instrumented (instrument.go) and its calls
	// are limited by a watchdog instead of wazero's close-on-context-done.
	stoppable bool
}

// compile checks the magic number, compiles through the cache and checks
// the exports' presence and signatures. kind "" checks only the common
// exports (for Inspect).
func compile(ctx context.Context, wasm []byte, kind Kind, o Options) (*compiled, error) {
	if !bytes.HasPrefix(wasm, wasmMagic) {
		return nil, ErrNotWasm
	}
	if o.CallTimeout > 0 {
		if iw, err := instrument(wasm); err == nil {
			if c, err := compileWith(ctx, iw, kind, o, false); err == nil {
				c.stoppable = true
				return c, nil
			}
		}
	}
	return compileWith(ctx, wasm, kind, o, o.CallTimeout > 0)
}

func compileWith(ctx context.Context, wasm []byte, kind Kind, o Options, closeOnDone bool) (*compiled, error) {
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(o.Cache).
		WithMemoryLimitPages(o.MemoryLimitPages).
		WithCloseOnContextDone(closeOnDone)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	code, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	c := &compiled{rt: rt, code: code, info: describe(code)}
	if err := c.check(kind); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("hooks: wasi: %w", err)
	}
	return c, nil
}

func (c *compiled) check(kind Kind) error {
	exports := c.code.ExportedFunctions()
	if _, ok := exports[abi.ExportVersion]; !ok {
		return ErrNoVersion
	}
	if _, ok := c.code.ExportedMemories()[abi.ExportMemory]; !ok {
		return fmt.Errorf("%w: memory %q", ErrMissingExport, abi.ExportMemory)
	}
	need := []string{abi.ExportVersion, abi.ExportAlloc}
	if kind != "" {
		name, ok := kindExport[kind]
		if !ok {
			return fmt.Errorf("hooks: unknown kind %q", kind)
		}
		need = append(need, name)
	}
	for _, name := range need {
		if _, ok := exports[name]; !ok {
			return fmt.Errorf("%w: function %s", ErrMissingExport, name)
		}
	}
	for name, def := range exports {
		want, ok := sigs[name]
		if !ok {
			continue
		}
		if !sameTypes(def.ParamTypes(), want.params) || !sameTypes(def.ResultTypes(), want.results) {
			return fmt.Errorf("%w: %s is %s, want %s", ErrBadExport, name,
				sigString(def.ParamTypes(), def.ResultTypes()), sigString(want.params, want.results))
		}
	}
	return nil
}

func (c *compiled) close(ctx context.Context) { c.rt.Close(ctx) }

// instantiate starts a fresh instance: start functions (_initialize for a
// reactor such as a Go c-shared module), the version check and the
// configuration.
func (c *compiled) instantiate(ctx context.Context, kind Kind, o Options) (*instance, error) {
	tail := &tailWriter{w: o.Stderr}
	mc := wazero.NewModuleConfig().
		WithName("").
		WithStdout(tail).
		WithStderr(tail)
	ictx := ctx
	if c.stoppable {
		// The start functions run below, under the watchdog: the
		// instrumented code ignores a context's end.
		mc = mc.WithStartFunctions()
	} else {
		mc = mc.WithStartFunctions("_initialize")
		if o.CallTimeout > 0 {
			// close-on-context-done stops a start function that overruns.
			var cancel context.CancelFunc
			ictx, cancel = context.WithTimeout(ctx, o.CallTimeout)
			defer cancel()
		}
	}
	mod, err := c.rt.InstantiateModule(ictx, c.code, mc)
	if err != nil {
		if ictx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("%w: %w after %v%s", ErrInstantiate, ErrTimeout, o.CallTimeout, tail.quote())
		}
		return nil, fmt.Errorf("%w: %w%s", ErrInstantiate, err, tail.quote())
	}
	in := &instance{mod: mod, mem: mod.Memory(), stderr: tail, limit: uint64(o.MemoryLimitPages) * 65536, stack: make([]uint64, 4)}
	if c.stoppable {
		g, ok := mod.ExportedGlobal(stopGlobal).(api.MutableGlobal)
		if !ok {
			mod.Close(ctx)
			return nil, fmt.Errorf("%w: %s is not a mutable global", ErrInstantiate, stopGlobal)
		}
		in.watch = newWatchdog(g)
		for _, name := range []string{startExport, "_initialize"} {
			if f := mod.ExportedFunction(name); f != nil {
				if err := in.invoke(ctx, f, o); err != nil {
					in.close(ctx)
					return nil, fmt.Errorf("%w: %s: %w", ErrInstantiate, name, err)
				}
			}
		}
	}
	in.alloc = mod.ExportedFunction(abi.ExportAlloc)
	if kind != "" {
		in.fn = mod.ExportedFunction(kindExport[kind])
	}
	fail := func(err error) (*instance, error) {
		in.close(ctx)
		return nil, err
	}
	v, err := in.call0(ctx, mod.ExportedFunction(abi.ExportVersion), o)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", abi.ExportVersion, err))
	}
	if v < abi.MinVersion || v > abi.Version {
		return fail(fmt.Errorf("%w: module speaks ABI %d, host speaks %d to %d", ErrABIVersion, v, abi.MinVersion, abi.Version))
	}
	if kind == KindInterceptor && v < abi.InterceptorVersion {
		return fail(fmt.Errorf("%w: module speaks ABI %d, an interceptor needs %d", ErrABIVersion, v, abi.InterceptorVersion))
	}
	in.version = v
	in.fields = abi.AllFields
	if f := mod.ExportedFunction(abi.ExportRecordFields); f != nil {
		v, err := in.call0(ctx, f, o)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", abi.ExportRecordFields, err))
		}
		in.fields = int32(v) & abi.AllFields
	}
	if f := mod.ExportedFunction(abi.ExportConfigure); f != nil {
		if err := in.configure(ctx, f, o); err != nil {
			return fail(err)
		}
	}
	return in, nil
}

// Info describes a module, for Inspect and for logs.
type Info struct {
	ABIVersion   int32    // what gregor_abi_version returned (0 before instantiation)
	Kinds        []Kind   // kinds whose export is present
	RecordFields int32    // what a partitioner reads (abi.Field*)
	Exports      []string // every exported function, "name(i32,i32) -> i32"
	Imports      []string // every imported function, "module.name"
	MemoryMin    uint32   // initial memory in pages
	MemoryMax    uint32   // declared maximum in pages (0: none)
}

func describe(code wazero.CompiledModule) Info {
	var info Info
	for name, def := range code.ExportedFunctions() {
		if name == startExport {
			continue // instrument's, not the module's
		}
		info.Exports = append(info.Exports, name+sigString(def.ParamTypes(), def.ResultTypes()))
	}
	sort.Strings(info.Exports)
	for _, def := range code.ImportedFunctions() {
		mod, name, _ := def.Import()
		info.Imports = append(info.Imports, mod+"."+name)
	}
	sort.Strings(info.Imports)
	for _, k := range []Kind{KindPartitioner, KindRetention, KindAuthorizer, KindInterceptor} {
		if _, ok := code.ExportedFunctions()[kindExport[k]]; ok {
			info.Kinds = append(info.Kinds, k)
		}
	}
	for _, m := range code.ExportedMemories() {
		info.MemoryMin = m.Min()
		if max, ok := m.Max(); ok {
			info.MemoryMax = max
		}
	}
	return info
}

// Inspect compiles and starts a module once, without a kind, and reports
// its ABI version, kinds, exports and imports. A module with no version
// marker or an unknown version is an error, but Info still lists what was
// found.
func Inspect(ctx context.Context, wasm []byte, o Options) (Info, error) {
	if err := o.Validate(); err != nil {
		return Info{}, err
	}
	o = o.Default()
	c, err := compile(ctx, wasm, "", o)
	if err != nil {
		var info Info
		if !errors.Is(err, ErrNotWasm) && !errors.Is(err, ErrInvalid) {
			// compile closed its runtime; describe from a plain compile.
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(o.Cache))
			defer rt.Close(ctx)
			if code, cerr := rt.CompileModule(ctx, wasm); cerr == nil {
				info = describe(code)
			}
		}
		return info, fmt.Errorf("hooks: inspect: %w", err)
	}
	defer c.close(ctx)
	in, err := c.instantiate(ctx, "", o)
	if err != nil {
		return c.info, fmt.Errorf("hooks: inspect: %w", err)
	}
	defer in.close(ctx)
	info := c.info
	info.ABIVersion = in.version
	info.RecordFields = in.fields
	return info, nil
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sigString(params, results []api.ValueType) string {
	var b bytes.Buffer
	b.WriteByte('(')
	for i, p := range params {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(api.ValueTypeName(p))
	}
	b.WriteByte(')')
	if len(results) > 0 {
		b.WriteString(" -> ")
		for i, r := range results {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(api.ValueTypeName(r))
		}
	}
	return b.String()
}
