package hooks

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"time"
)

// Reload recompiles the module from its file and swaps it in. Calls in
// flight finish on the old instances, new calls use the new ones; nothing
// is dropped. If the new file fails any check, the old module keeps serving
// and the error says why. Reloading identical bytes is a no-op that reports
// false.
func (m *Module) Reload(ctx context.Context) (bool, error) {
	m.reload.Lock()
	defer m.reload.Unlock()
	return m.reloadLocked(ctx)
}

func (m *Module) reloadLocked(ctx context.Context) (bool, error) {
	if m.closed.Load() {
		return false, fmt.Errorf("hooks: %s: %w", m.path, ErrClosed)
	}
	old := m.cur.Load()
	wasm, err := os.ReadFile(m.path)
	if err != nil {
		return false, fmt.Errorf("hooks: reload: %w", err)
	}
	if sha256.Sum256(wasm) == old.digest {
		if st, err := os.Stat(m.path); err == nil {
			old.stamp = fileStamp{size: st.Size(), mtime: st.ModTime().UnixNano()}
		}
		return false, nil
	}
	g, err := m.build(ctx)
	if err != nil {
		m.opts.Logger.Error("hooks: reload failed; the previous module keeps serving", "module", m.path, "err", err)
		return false, fmt.Errorf("hooks: reload: %w", err)
	}
	m.cur.Store(g)
	old.retire(ctx)
	m.opts.Logger.Info("hooks: module reloaded", "module", m.path, "kind", m.kind)
	return true, nil
}

// CheckReload reloads when the file's size or modification time changed
// since the last load. It reports whether a new module was swapped in.
func (m *Module) CheckReload(ctx context.Context) (bool, error) {
	st, err := os.Stat(m.path)
	if err != nil {
		return false, fmt.Errorf("hooks: watch: %w", err)
	}
	m.reload.Lock()
	defer m.reload.Unlock()
	if (fileStamp{size: st.Size(), mtime: st.ModTime().UnixNano()}) == m.cur.Load().stamp {
		return false, nil
	}
	return m.reloadLocked(ctx)
}

// Watch calls CheckReload on every tick until ctx ends; errors go to the
// logger and the previous module keeps serving. The caller owns the ticker
// (time.NewTicker(d).C in the broker, a channel in tests).
func (m *Module) Watch(ctx context.Context, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			if _, err := m.CheckReload(ctx); err != nil {
				m.opts.Logger.Warn("hooks: module check failed", "module", m.path, "err", err)
			}
		}
	}
}
