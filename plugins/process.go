package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sdkplugin "github.com/gregorbroker/gregor/sdk/plugin"
)

// configureFunc configures a freshly dispensed gRPC client (raw) and may
// read what the adapter caches per process (mechanisms, group interest).
type configureFunc func(ctx context.Context, raw any) error

// process supervises one plugin process: it starts it, hands out its gRPC
// client, notices a crash or a hang, and restarts it after a backoff. Calls
// never wait for a restart; they get ErrUnavailable until one succeeds.
type process struct {
	cfg       Config
	log       *slog.Logger
	configure configureFunc

	mu       sync.Mutex // guards every field below
	client   *goplugin.Client
	raw      any    // the dispensed gRPC client of client
	gen      uint64 // increments with each successful start
	failures int    // consecutive crashes and failed starts, for the backoff
	retryAt  time.Time
	lastErr  error
	starting bool
	closed   bool
	changed  chan struct{} // closed and replaced when a start attempt ends
}

// startProcess launches the plugin and waits for it; an error here (the
// binary does not start, the handshake fails, Configure is refused) is
// returned and nothing keeps running.
func startProcess(cfg Config, configure configureFunc) (*process, error) {
	p := &process{
		cfg:       cfg,
		log:       cfg.Logger.With("extension", cfg.Name, "kind", cfg.Kind),
		configure: configure,
		changed:   make(chan struct{}),
	}
	client, raw, err := p.launch()
	if err != nil {
		return nil, err
	}
	p.client, p.raw, p.gen = client, raw, 1
	p.log.Info("extension process started", "path", cfg.Path)
	return p, nil
}

// launch starts a process, dispenses the kind's client and configures it.
func (p *process) launch() (*goplugin.Client, any, error) {
	startErr := func(err error) error {
		return fmt.Errorf("plugins: %s: start %s: %w: %w", p.cfg.Name, p.cfg.Path, ErrStart, err)
	}
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sdkplugin.Handshake,
		Plugins:          sdkplugin.ClientPlugins(),
		Cmd:              exec.Command(p.cfg.Path, p.cfg.Args...),
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		StartTimeout:     p.cfg.StartTimeout,
		Logger:           newHCLog(p.log),
		SyncStdout:       &lineWriter{log: func(l string) { p.log.Info(l, "stream", "stdout") }},
		SyncStderr:       &lineWriter{log: func(l string) { p.log.Info(l, "stream", "stderr") }},
		GRPCDialOptions: []grpc.DialOption{
			grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(sdkplugin.MaxMessageBytes)),
		},
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, nil, startErr(explainStart(err))
	}
	raw, err := rpc.Dispense(p.cfg.Kind)
	if err != nil {
		client.Kill()
		return nil, nil, startErr(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.StartTimeout)
	defer cancel()
	if err := p.configure(ctx, raw); err != nil {
		client.Kill()
		return nil, nil, startErr(explainCall(err, p.cfg.Kind))
	}
	return client, raw, nil
}

// explainStart replaces go-plugin's start errors, some of them a screen
// long, with one line that says what went wrong.
func explainStart(err error) error {
	msg := err.Error()
	first, _, _ := strings.Cut(msg, "\n")
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "incompatible api version"):
		return fmt.Errorf("handshake: the plugin speaks another protocol version than this broker (%d): %s",
			sdkplugin.ProtocolVersion, first)
	case strings.Contains(lower, "unrecognized remote plugin message"), strings.Contains(lower, "exited before we could connect"):
		return errors.New("the process exited or wrote no handshake " +
			"(not a Gregor plugin, or it failed at start; its stderr is in the log)")
	case strings.Contains(lower, "timeout while waiting for plugin to start"):
		return fmt.Errorf("no handshake within the start timeout: %s", first)
	}
	return err
}

func explainCall(err error, kind string) error {
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.Unimplemented:
			return fmt.Errorf("the plugin does not serve the %s kind", kind)
		case codes.FailedPrecondition, codes.InvalidArgument:
			return errors.New(st.Message())
		}
	}
	return err
}

// acquire returns the live process's client and its generation, or
// ErrUnavailable (starting a restart when its backoff has passed).
func (p *process) acquire() (any, uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, 0, fmt.Errorf("plugins: %s: %w", p.cfg.Name, ErrClosed)
	}
	if p.client != nil {
		if !p.client.Exited() {
			return p.raw, p.gen, nil
		}
		p.downLocked(errors.New("the process exited"))
	}
	p.maybeRestartLocked()
	return nil, 0, p.unavailableLocked()
}

func (p *process) unavailableLocked() error {
	if p.starting {
		return fmt.Errorf("plugins: %s: %w: restarting (last error: %v)", p.cfg.Name, ErrUnavailable, p.lastErr)
	}
	wait := p.retryAt.Sub(p.cfg.Now())
	return fmt.Errorf("plugins: %s: %w: next restart in %v (last error: %v)", p.cfg.Name, ErrUnavailable, wait.Round(time.Millisecond), p.lastErr)
}

// downLocked drops the current process after a crash or a hang.
func (p *process) downLocked(cause error) {
	client := p.client
	p.client, p.raw = nil, nil
	p.failures++
	p.lastErr = cause
	wait := p.backoff()
	p.retryAt = p.cfg.Now().Add(wait)
	p.log.Warn("extension process down; restarting after backoff", "error", cause, "backoff", wait, "failures", p.failures)
	// Kill waits up to 2s for a graceful exit; a call must not wait for it.
	go client.Kill()
}

func (p *process) backoff() time.Duration {
	d := p.cfg.MinBackoff
	for i := 1; i < p.failures && d < p.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.cfg.MaxBackoff)
}

func (p *process) maybeRestartLocked() {
	if p.starting || p.closed || p.cfg.Now().Before(p.retryAt) {
		return
	}
	p.starting = true
	go p.restart()
}

func (p *process) restart() {
	client, raw, err := p.launch()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starting = false
	close(p.changed)
	p.changed = make(chan struct{})
	if p.closed {
		if client != nil {
			go client.Kill()
		}
		return
	}
	if err != nil {
		p.failures++
		p.lastErr = err
		wait := p.backoff()
		p.retryAt = p.cfg.Now().Add(wait)
		p.log.Error("extension restart failed", "error", err, "backoff", wait, "failures", p.failures)
		return
	}
	p.client, p.raw = client, raw
	p.gen++
	p.log.Info("extension process restarted", "failures", p.failures)
}

// failed drops process generation gen after a transport failure or a
// timeout; a later generation is left alone.
func (p *process) failed(gen uint64, cause error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gen != p.gen || p.client == nil || p.closed {
		return
	}
	p.downLocked(cause)
}

// succeeded resets the backoff once generation gen has answered a call.
func (p *process) succeeded(gen uint64) {
	p.mu.Lock()
	if gen == p.gen && p.failures != 0 {
		p.failures = 0
	}
	p.mu.Unlock()
}

// waitReady waits until a process is up. It starts a restart when the
// backoff has passed and returns ErrUnavailable when a restart attempt
// failed and the next one is not due yet.
func (p *process) waitReady(ctx context.Context) error {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return fmt.Errorf("plugins: %s: %w", p.cfg.Name, ErrClosed)
		}
		if p.client != nil && !p.client.Exited() {
			p.mu.Unlock()
			return nil
		}
		if p.client != nil {
			p.downLocked(errors.New("the process exited"))
		}
		p.maybeRestartLocked()
		if !p.starting {
			err := p.unavailableLocked()
			p.mu.Unlock()
			return err
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("plugins: %s: waiting for the process: %w", p.cfg.Name, ctx.Err())
		}
	}
}

// call runs fn against the live process with the call timeout (or ctx's
// earlier deadline) and sorts
// its failure into ErrTimeout (the process is restarted), ErrUnavailable
// (crashed: restarted), or ErrExtension (the extension's own error).
func (p *process) call(ctx context.Context, op string, fn func(ctx context.Context, raw any) error) error {
	raw, gen, err := p.acquire()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	defer cancel()
	err = fn(cctx, raw)
	if err == nil {
		p.succeeded(gen)
		return nil
	}
	prefix := fmt.Sprintf("plugins: %s: %s", p.cfg.Name, op)
	if errors.Is(err, ErrExtension) {
		p.succeeded(gen)
		return fmt.Errorf("%s: %w", prefix, err)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		// The caller gave up; the process may be fine.
		return fmt.Errorf("%s: %w", prefix, ctx.Err())
	}
	// The caller's deadline (core/extension bounds every call with the
	// extension's timeout) passing unanswered is a hang like the call
	// timeout's: the process is restarted.
	st, _ := status.FromError(err)
	switch st.Code() {
	case codes.Aborted:
		p.succeeded(gen)
		return fmt.Errorf("%s: %w: %s", prefix, ErrExtension, st.Message())
	case codes.Unimplemented, codes.FailedPrecondition, codes.InvalidArgument:
		return fmt.Errorf("%s: %w: %v", prefix, ErrExtension, explainCall(err, p.cfg.Kind))
	case codes.DeadlineExceeded:
		p.failed(gen, fmt.Errorf("%s: no answer within %v", op, p.cfg.CallTimeout))
		return fmt.Errorf("%s: %w after %v; the process is restarted", prefix, ErrTimeout, p.cfg.CallTimeout)
	}
	p.failed(gen, fmt.Errorf("%s: %w", op, err))
	return fmt.Errorf("%s: %w: the process failed (%s); it is restarted", prefix, ErrUnavailable, st.Message())
}

// close stops the process for good.
func (p *process) close() {
	p.mu.Lock()
	client := p.client
	p.client, p.raw = nil, nil
	p.closed = true
	p.mu.Unlock()
	if client != nil {
		client.Kill()
	}
}
