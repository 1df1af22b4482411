package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/gregorbroker/gregor/hooks"
	"github.com/gregorbroker/gregor/sdk/clients/franzgo"
)

// wasmPartitioner is the topic's WebAssembly partitioner loaded into the
// producer, so `gregor produce` places records exactly where the broker's
// produce-over-HTTP and placement check would.
type wasmPartitioner struct {
	p *hooks.Partitioner

	mu       sync.Mutex // guards failed and firstErr, set from the client's goroutines
	failed   int64
	firstErr error
}

// loadWASMPartitioner loads path with cfg (a JSON object) as its module
// configuration.
func loadWASMPartitioner(ctx context.Context, path, cfg string, timeout time.Duration) (*wasmPartitioner, error) {
	raw := []byte(strings.TrimSpace(cfg))
	if !bytes.HasPrefix(raw, []byte("{")) {
		return nil, usagef("--partitioner-config must be a JSON object, got %q", cfg)
	}
	o := hooks.Options{Config: raw, CallTimeout: timeout, Stderr: os.Stderr}
	if err := o.Validate(); err != nil {
		return nil, usageError{err}
	}
	// No fallback inside hooks: the adapter counts failures, so the
	// command can report them instead of placing records silently.
	p, err := hooks.LoadPartitioner(ctx, path, o)
	if err != nil {
		return nil, fmt.Errorf("--partitioner-wasm %s: %w", path, err)
	}
	return &wasmPartitioner{p: p}, nil
}

// option is the client option that places records with the module.
func (w *wasmPartitioner) option() kgo.Opt {
	fp := franzgo.NewPartitioner(w.p)
	fp.OnError = func(err error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.failed++
		if w.firstErr == nil {
			w.firstErr = err
		}
	}
	return kgo.RecordPartitioner(fp)
}

// err reports the records the module failed to place, which were placed
// by Kafka's default rule instead.
func (w *wasmPartitioner) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed == 0 {
		return nil
	}
	return fmt.Errorf("the partitioner module failed for %s, placed by Kafka's default rule instead; first error: %w",
		plural(w.failed, "record"), w.firstErr)
}

func (w *wasmPartitioner) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = w.p.Close(ctx)
}
