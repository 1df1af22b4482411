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
//	p, err := hooks.LoadPartitioner(ctx, path, hooks.Options{...}, fallback) // fallback: partitioner.BatchPartitioner or nil
//	err = p.PartitionBatch(records, numPartitions, out)                     // one guest call per batch
//	err = p.PartitionBatchContext(ctx, records, numPartitions, out)
//	part := p.Partition(record, numPartitions)                              // partitioner.Partitioner
//
//	r, err := hooks.LoadRetentionPolicy(ctx, path, opts, fallback)          // retention.Policy
//	n, err := r.DeletableSegments(ctx, partition)
//
//	a, err := hooks.LoadAuthorizer(ctx, path, opts, fallback)               // auth.Authorizer
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
//	info, err := hooks.Inspect(ctx, wasmBytes, opts)  // for `gregor plugin inspect`
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
// range keeps the instance. Either way the adapter logs the failure and
// applies its fallback, or returns the error when the fallback is nil
// (reject). A failing module never panics the broker.
//
// Cost (make bench-plugins, 2 cores, 16-byte keys): the built-in murmur2
// places a record in 8-10 ns; the AssemblyScript murmur2 module in about
// 22 ns/record in batches of 100 or 1000 (100 ns for a batch of one: the
// call itself); a Go guest in about 160 ns/record (Go's wasm code is
// slower, and its runtime costs ~0.5 us per call). CallTimeout makes
// wazero leave native code at every loop iteration to check for
// cancellation, which multiplies guest time by 5-10 (AS: 200 ns/record,
// Go guest: 750 ns/record); use it for untrusted modules, and batch.
package hooks
