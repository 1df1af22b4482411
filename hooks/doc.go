// Package hooks is Gregor's WebAssembly extension host (wazero). It owns
// ABI v2 (hooks/ABI.md; v1 modules load unchanged), compiling modules once through a shared
// compilation cache, checking their exports and version marker, pools of
// instances (an instance serves one call at a time), per-module memory and
// per-call time limits, classifying failures, reloading modules without
// dropping calls, and the adapters that make a module implement an sdk
// contract. It must not import core: the server injects these adapters
// into core as sdk interfaces.
//
// The API:
//
//	p, err := hooks.LoadPartitioner(ctx, path, hooks.Options{...})  // partitioner.BatchPartitioner
//	err = p.PartitionBatch(records, numPartitions, out)             // one guest call per batch
//	err = p.PartitionBatchContext(ctx, records, numPartitions, out)
//
//	r, err := hooks.LoadRetentionPolicy(ctx, path, opts)            // retention.Policy
//	n, err := r.DeletableSegments(ctx, partition)
//
//	a, err := hooks.LoadAuthorizer(ctx, path, opts)                 // auth.Authorizer
//	err = a.Authorize(ctx, actions, decisions)
//
//	ic, err := hooks.LoadInterceptor(ctx, path, opts)                     // interceptor.Interceptor
//	d, err := ic.InterceptProduce(ctx, batch)                           // one guest call per batch
//
//	m := p.Module()                     // also r.Module(), a.Module(), ic.Module()
//	changed, err := m.Reload(ctx)       // admin API: recompile now
//	changed, err = m.CheckReload(ctx)   // reload if the file's size or mtime changed
//	go m.Watch(ctx, time.NewTicker(5*time.Second).C)
//	info := m.Info()                    // ABI version, kinds, exports, imports
//	err = p.Close(ctx)
//
//	info, err := hooks.Inspect(ctx, wasmBytes, opts)  // for `gregor extension inspect`
//
// Load refuses, with an error matching one of the Err* values: a file that
// is not WebAssembly (ErrNotWasm) or does not compile (ErrInvalid), a
// module without gregor_abi_version (ErrNoVersion) or with another version
// (ErrABIVersion), missing or mistyped exports (ErrMissingExport,
// ErrBadExport), a module that fails to start or rejects its configuration
// (ErrInstantiate, ErrConfig), and initial memory over the limit.
//
// A call that traps (ErrTrap), exits (ErrExit), runs past CallTimeout
// (ErrTimeout), hits the memory limit (ErrMemoryLimit) or hands back an
// unusable buffer (ErrBadBuffer) discards its instance; the next call gets
// a fresh one. A result code (ErrGuest, *GuestError) or an answer out of
// range keeps the instance. Either way the adapter returns the error: the
// fallback, the failure policy and the call statistics are the broker's
// (core/extension), the same for WebAssembly modules and plugin processes.
// A failing module never panics the broker.
//
// Every call of a module runs under Options.CallTimeout, DefaultCallTimeout
// (1 s) when unset; Options.Trusted runs it with no limit. The module is
// rewritten at load with a stop check at every loop head and a timer per
// instance sets it (instrument.go, watchdog.go), so the limit costs about
// 0.2 us per call and nothing measurable per record. Cost (hooks/BENCH.md,
// 2 shared cores, batches of 100-1000 1 KiB records): the built-in murmur2
// places a record in 8-14 ns; the AssemblyScript murmur2 module in 33-45
// ns/record, limited or trusted; a Go guest in 230-310. A module the
// rewriter cannot read keeps wazero's close-on-context-done, which returns
// to Go at every loop iteration (10-20x).
package hooks
