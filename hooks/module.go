package hooks

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// Module is a loaded, validated WebAssembly module of one kind with a pool
// of instances. It is safe for concurrent use: each call borrows an
// instance, and a failed instance is discarded and replaced on demand.
// Reload swaps in a new compilation while calls on the old one finish.
type Module struct {
	path string
	kind Kind
	opts Options

	cur    atomic.Pointer[generation]
	reload sync.Mutex // serialises Reload and Close; calls never take it
	closed atomic.Bool
}

// generation is one compilation of the module file and its instances.
type generation struct {
	c       *compiled
	digest  [32]byte
	stamp   fileStamp // guarded by Module.reload
	fields  int32     // record fields a partitioner reads (from the first instance)
	version int32     // the module's ABI version (from the first instance)

	idle chan *instance // instances ready to use
	live chan struct{}  // one token per instance alive (bounds MaxInstances)

	mu       sync.Mutex // guards inflight and retired
	inflight int
	retired  bool
}

// fileStamp is what CheckReload compares to notice a changed file.
type fileStamp struct {
	size  int64
	mtime int64
}

// Load reads, compiles and validates the module at path for kind and starts
// one instance, so a module that cannot run fails here and not on the first
// request. See the package documentation for the checks.
func Load(ctx context.Context, path string, kind Kind, o Options) (*Module, error) {
	if _, ok := kindExport[kind]; !ok {
		return nil, fmt.Errorf("hooks: unknown kind %q", kind)
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	m := &Module{path: path, kind: kind, opts: o.Default()}
	g, err := m.build(ctx)
	if err != nil {
		return nil, err
	}
	m.cur.Store(g)
	return m, nil
}

// Path returns the module's file.
func (m *Module) Path() string { return m.path }

// Kind returns the module's kind.
func (m *Module) Kind() Kind { return m.kind }

// Info describes the module currently serving calls.
func (m *Module) Info() Info {
	g := m.cur.Load()
	info := g.c.info
	info.ABIVersion = g.version
	info.RecordFields = g.fields
	return info
}

func (m *Module) build(ctx context.Context) (*generation, error) {
	st, err := os.Stat(m.path)
	if err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	wasm, err := os.ReadFile(m.path)
	if err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	c, err := compile(ctx, wasm, m.kind, m.opts)
	if err != nil {
		return nil, fmt.Errorf("hooks: %s: %w", m.path, err)
	}
	in, err := c.instantiate(ctx, m.kind, m.opts)
	if err != nil {
		c.close(ctx)
		return nil, fmt.Errorf("hooks: %s: %w", m.path, err)
	}
	g := &generation{
		c:       c,
		digest:  sha256.Sum256(wasm),
		stamp:   fileStamp{size: st.Size(), mtime: st.ModTime().UnixNano()},
		fields:  in.fields,
		version: in.version,
		idle:    make(chan *instance, m.opts.MaxInstances),
		live:    make(chan struct{}, m.opts.MaxInstances),
	}
	g.live <- struct{}{}
	g.idle <- in
	return g, nil
}

// acquire borrows an instance from the current generation, starting one
// when none is idle and fewer than MaxInstances are alive, else waiting.
func (m *Module) acquire(ctx context.Context) (*generation, *instance, error) {
	for {
		if m.closed.Load() {
			return nil, nil, fmt.Errorf("hooks: %s: %w", m.path, ErrClosed)
		}
		g := m.cur.Load()
		g.mu.Lock()
		if g.retired {
			g.mu.Unlock()
			continue // a reload swapped generations; take the new one
		}
		g.inflight++
		g.mu.Unlock()
		in, err := m.instanceFrom(ctx, g)
		if err != nil {
			m.release(ctx, g)
			return nil, nil, err
		}
		return g, in, nil
	}
}

func (m *Module) instanceFrom(ctx context.Context, g *generation) (*instance, error) {
	select {
	case in := <-g.idle:
		return in, nil
	default:
	}
	select {
	case in := <-g.idle:
		return in, nil
	case g.live <- struct{}{}:
		in, err := g.c.instantiate(ctx, m.kind, m.opts)
		if err != nil {
			<-g.live
			return nil, fmt.Errorf("hooks: %s: %w", m.path, err)
		}
		return in, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("hooks: %s: waiting for an instance: %w", m.path, ctx.Err())
	}
}

// put returns a healthy instance, or discards a failed one (failed != nil).
func (m *Module) put(ctx context.Context, g *generation, in *instance, failed error) {
	if failed != nil {
		m.opts.Logger.Warn("hooks: discarding instance", "module", m.path, "kind", m.kind, "err", failed)
		in.close(ctx)
		<-g.live
	} else {
		g.idle <- in // never blocks: idle holds at most the live count
	}
	m.release(ctx, g)
}

// release ends a call on g; the last call on a retired generation closes it.
func (m *Module) release(ctx context.Context, g *generation) {
	g.mu.Lock()
	g.inflight--
	done := g.retired && g.inflight == 0
	g.mu.Unlock()
	if done {
		g.close(ctx)
	}
}

// retire stops new calls on g and closes it once its calls finished.
func (g *generation) retire(ctx context.Context) {
	g.mu.Lock()
	g.retired = true
	done := g.inflight == 0
	g.mu.Unlock()
	if done {
		g.close(ctx)
	}
}

func (g *generation) close(ctx context.Context) {
	g.c.close(ctx) // closes every instance the runtime started
}

// Close stops the module. Calls in flight finish; later calls fail with
// ErrClosed.
func (m *Module) Close(ctx context.Context) error {
	m.reload.Lock()
	defer m.reload.Unlock()
	if m.closed.Swap(true) {
		return nil
	}
	m.cur.Load().retire(ctx)
	return nil
}
