package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gregorbroker/gregor/sdk/wasm/abi"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// instance is one instantiated module. It is not goroutine-safe: the pool
// hands it to one caller at a time. Any failure other than a result code
// discards it, since a trapped or stopped guest's state is unknown.
type instance struct {
	mod     api.Module
	mem     api.Memory
	alloc   api.Function
	fn      api.Function // the kind's export
	stack   []uint64     // reused by every call (CallWithStack)
	fields  int32        // record fields a partitioner reads
	version int32        // what gregor_abi_version returned
	limit   uint64       // memory limit in bytes
	stderr  *tailWriter
	watch   *watchdog // limits calls of an instrumented module; nil otherwise

	bufPtr, bufCap uint32 // the guest's exchange buffer from gregor_alloc
}

func (in *instance) close(ctx context.Context) { in.mod.Close(ctx) }

// invoke calls f with the stack already loaded, under the call timeout.
func (in *instance) invoke(ctx context.Context, f api.Function, o Options) error {
	if in.watch != nil && o.CallTimeout > 0 {
		return in.invokeWatched(ctx, f, o)
	}
	if o.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.CallTimeout)
		defer cancel()
	}
	in.stderr.reset()
	if err := f.CallWithStack(ctx, in.stack); err != nil {
		return in.classify(ctx, err, o)
	}
	return nil
}

// classify turns a failed call into one of the package's errors, quoting
// the end of the guest's stderr (a Go guest's fatal error says why).
func (in *instance) classify(ctx context.Context, err error, o Options) error {
	tail := in.stderr.quote()
	var exit *sys.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeDeadlineExceeded:
		if ctx.Err() != nil && o.CallTimeout > 0 {
			return fmt.Errorf("%w after %v%s", ErrTimeout, o.CallTimeout, tail)
		}
		return fmt.Errorf("hooks: %w", err)
	case errors.As(err, &exit) && exit.ExitCode() == sys.ExitCodeContextCanceled:
		return fmt.Errorf("hooks: call canceled: %w", err)
	case in.outOfMemory():
		return fmt.Errorf("%w (%d pages): %w%s", ErrMemoryLimit, o.MemoryLimitPages, err, tail)
	case errors.As(err, &exit):
		return fmt.Errorf("%w with code %d%s", ErrExit, exit.ExitCode(), tail)
	}
	return fmt.Errorf("%w: %w%s", ErrTrap, err, tail)
}

// outOfMemory guesses whether a failure came from the memory limit: the
// memory is within a MiB of it, or the guest said so (Go's runtime prints
// "out of memory" before it exits).
func (in *instance) outOfMemory() bool {
	if in.mem != nil && uint64(in.mem.Size())+1<<20 >= in.limit {
		return true
	}
	return strings.Contains(in.stderr.String(), "out of memory")
}

// call0 calls a function without parameters returning one i32.
func (in *instance) call0(ctx context.Context, f api.Function, o Options) (int32, error) {
	if err := in.invoke(ctx, f, o); err != nil {
		return 0, err
	}
	return int32(in.stack[0]), nil
}

// buffer returns a view of at least n bytes of the guest's exchange
// buffer, asking the guest for a larger one when needed. The view is valid
// until the next guest call.
func (in *instance) buffer(ctx context.Context, n int, o Options) ([]byte, error) {
	if n > o.MaxCallBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, o.MaxCallBytes)
	}
	if uint32(n) > in.bufCap || in.bufPtr == 0 {
		size := max(uint32(n), 4096, in.bufCap*2)
		size = min(size, uint32(o.MaxCallBytes))
		in.stack[0] = uint64(size)
		if err := in.invoke(ctx, in.alloc, o); err != nil {
			return nil, fmt.Errorf("%s(%d): %w", abi.ExportAlloc, size, err)
		}
		in.bufPtr, in.bufCap = uint32(in.stack[0]), size
		if in.bufPtr == 0 {
			in.bufCap = 0
			return nil, fmt.Errorf("%w: %s(%d) returned 0", ErrBadBuffer, abi.ExportAlloc, size)
		}
	}
	view, ok := in.mem.Read(in.bufPtr, uint32(n))
	if !ok {
		return nil, fmt.Errorf("%w: %d bytes at %#x, memory is %d bytes", ErrBadBuffer, n, in.bufPtr, in.mem.Size())
	}
	return view, nil
}

// output re-reads n bytes at the start of the exchange buffer after a call
// (the call may have grown memory, which invalidates earlier views).
func (in *instance) output(n int) ([]byte, error) {
	view, ok := in.mem.Read(in.bufPtr, uint32(n))
	if !ok {
		return nil, fmt.Errorf("%w: output outside memory", ErrBadBuffer)
	}
	return view, nil
}

func (in *instance) configure(ctx context.Context, f api.Function, o Options) error {
	view, err := in.buffer(ctx, len(o.Config), o)
	if err != nil {
		return fmt.Errorf("configure: %w", err)
	}
	copy(view, o.Config)
	in.stack[0], in.stack[1] = uint64(in.bufPtr), uint64(len(o.Config))
	if err := in.invoke(ctx, f, o); err != nil {
		return fmt.Errorf("%s: %w", abi.ExportConfigure, err)
	}
	if code := int32(in.stack[0]); code != abi.OK {
		return fmt.Errorf("%w: %w%s", ErrConfig, &GuestError{Code: code}, in.stderr.quote())
	}
	return nil
}

// tailWriter forwards guest output and keeps the first KiB written during
// the current call, quoted in errors (a guest says why it fails before it
// dumps anything else). wazero writes from the calling goroutine, and an
// instance has one caller at a time, so no lock.
type tailWriter struct {
	w   io.Writer
	buf []byte
}

func (t *tailWriter) reset() { t.buf = t.buf[:0] }

func (t *tailWriter) Write(p []byte) (int, error) {
	if room := 1024 - len(t.buf); room > 0 {
		t.buf = append(t.buf, p[:min(room, len(p))]...)
	}
	if t.w != nil {
		t.w.Write(p)
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return string(t.buf) }

// quote returns ` (guest stderr: "...")` with the output's first
// paragraph, or "" when there was none.
func (t *tailWriter) quote() string {
	s := strings.TrimSpace(t.String())
	if s == "" {
		return ""
	}
	if i := strings.Index(s, "\n\n"); i > 0 {
		s = s[:i] // a Go guest's goroutine dump follows a blank line
	}
	return fmt.Sprintf(" (guest stderr: %q)", s)
}
