package hooks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// watchdog stops an instrumented instance's call that overruns its limit
// or whose context ends, by setting the module's stop global, which every
// loop iteration of the instrumented code checks (instrument.go). One
// timer per instance, reset per call, replaces wazero's per-call goroutine
// and per-iteration exit to Go.
type watchdog struct {
	stop  api.MutableGlobal
	timer *time.Timer

	mu       sync.Mutex
	gen      uint64    // the call in flight, or the last one
	deadline time.Time // of the call in flight; zero when none
	reason   stopReason
}

type stopReason uint8

const (
	notStopped stopReason = iota
	stoppedByLimit
	stoppedByContext
)

func newWatchdog(stop api.MutableGlobal) *watchdog {
	w := &watchdog{stop: stop}
	w.timer = time.AfterFunc(time.Hour, w.expire)
	w.timer.Stop()
	return w
}

// expire runs on the timer. A stale firing (for a call that ended, the
// timer since reset) finds no call past its deadline and does nothing.
func (w *watchdog) expire() {
	w.mu.Lock()
	if !w.deadline.IsZero() && w.reason == notStopped && !time.Now().Before(w.deadline) {
		w.reason = stoppedByLimit
		w.stop.Set(1)
	}
	w.mu.Unlock()
}

// cancel runs when call gen's context ends.
func (w *watchdog) cancel(gen uint64) {
	w.mu.Lock()
	if gen == w.gen && !w.deadline.IsZero() && w.reason == notStopped {
		w.reason = stoppedByContext
		w.stop.Set(1)
	}
	w.mu.Unlock()
}

func (w *watchdog) begin(limit time.Duration) uint64 {
	w.mu.Lock()
	w.gen++
	gen := w.gen
	if w.reason != notStopped {
		w.stop.Set(0) // the last call ended before the stop reached it
		w.reason = notStopped
	}
	w.deadline = time.Now().Add(limit)
	w.mu.Unlock()
	w.timer.Reset(limit)
	return gen
}

func (w *watchdog) end() stopReason {
	w.timer.Stop()
	w.mu.Lock()
	w.deadline = time.Time{}
	r := w.reason
	w.mu.Unlock()
	return r
}

// invokeWatched is invoke for an instrumented instance.
func (in *instance) invokeWatched(ctx context.Context, f api.Function, o Options) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hooks: call canceled: %w", err)
	}
	limit := o.CallTimeout
	if d, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(d))
	}
	w := in.watch
	gen := w.begin(limit)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { w.cancel(gen) })
		defer stop()
	}
	in.stderr.reset()
	err := f.CallWithStack(ctx, in.stack)
	reason := w.end()
	if err == nil {
		return nil
	}
	// As with wazero's check: the limit or the caller's deadline is a
	// timeout, a canceled context is a cancellation.
	switch {
	case reason == stoppedByLimit, reason == stoppedByContext && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w after %v%s", ErrTimeout, min(o.CallTimeout, limit), in.stderr.quote())
	case reason == stoppedByContext:
		return fmt.Errorf("hooks: call canceled: %w", ctx.Err())
	}
	return in.classify(ctx, err, o)
}
