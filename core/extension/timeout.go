package extension

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/gregorbroker/gregor/core/config"
)

// Default call limits of an extension that sets no timeout_ms.
const (
	DefaultWASMTimeout   = time.Second
	DefaultPluginTimeout = 2 * time.Second
)

// CallTimeout is the limit of one call of the extension e declares: its
// timeout_ms, else DefaultWASMTimeout for a module and DefaultPluginTimeout
// for a process; 0 (no limit) for a trusted module. The broker applies it to
// every call, and the loader hands the same value to the host, which
// enforces it (a module stopped, a process restarted).
func CallTimeout(e config.Extension) time.Duration {
	switch {
	case e.Trusted:
		return 0
	case e.TimeoutMs > 0:
		return time.Duration(e.TimeoutMs) * time.Millisecond
	case e.WASM != "":
		return DefaultWASMTimeout
	}
	return DefaultPluginTimeout
}

// withTimeout bounds ctx by d; d = 0 leaves it unbounded.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// warnEvery lets one failure warning a second through: a broken extension
// under load must not flood the log.
type warnEvery struct{ last atomic.Int64 } // unix nanos of the last warning

func (w *warnEvery) allow() bool {
	now := time.Now().UnixNano()
	last := w.last.Load()
	return now-last > int64(time.Second) && w.last.CompareAndSwap(last, now)
}
