package hooks

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/tetratelabs/wazero"
)

// Kind is what a module implements; it selects the export the host calls.
type Kind string

// Kinds of modules.
const (
	KindPartitioner Kind = "partitioner"
	KindRetention   Kind = "retention"
	KindAuthorizer  Kind = "authorizer"
	KindInterceptor Kind = "interceptor"
)

// Options configure a loaded module. The zero value is usable: Default
// fills what is unset.
type Options struct {
	// MemoryLimitPages caps the guest's linear memory in 64 KiB pages.
	// Default 1024 (64 MiB).
	MemoryLimitPages uint32
	// CallTimeout bounds every call of an untrusted module, its start
	// function and _initialize included; 0 means DefaultCallTimeout. The module is instrumented at load so that a
	// watchdog can stop it (instrument.go, watchdog.go); one the rewriter
	// cannot read falls back to wazero's close-on-context-done, which
	// leaves native code for the host at every loop iteration.
	CallTimeout time.Duration
	// Trusted runs the module with no time limit and no cost for one (the
	// broker's deadlines do not reach it either). A trusted module that
	// loops hangs its caller. broker.toml: trusted = true.
	Trusted bool
	// MaxInstances bounds the instances run at once (each is one
	// goroutine's at a time). Default GOMAXPROCS.
	MaxInstances int
	// MaxCallBytes bounds the input written into the guest for one call;
	// a partitioner batch over it is split. Default 4 MiB.
	MaxCallBytes int
	// Config is passed to gregor_configure when the module exports it:
	// the extension's config table as a JSON object. Default "{}".
	Config []byte
	// Stderr receives the guest's stdout and stderr. Default: discarded
	// (the last KiB is still quoted in errors).
	Stderr io.Writer
	// Cache holds compiled code across loads and reloads; modules sharing
	// it compile once. Default: one in-memory cache for the process.
	Cache wazero.CompilationCache
	// Logger reports failures, discarded instances and reloads.
	Logger *slog.Logger
}

// DefaultMemoryLimitPages is 64 MiB.
const DefaultMemoryLimitPages = 1024

// DefaultCallTimeout bounds a call of an untrusted module that sets no
// CallTimeout.
const DefaultCallTimeout = time.Second

// defaultCache is shared by modules that set no Cache, so loading the same
// bytes twice (a reload, or the same module for two topics) compiles once.
var defaultCache = wazero.NewCompilationCache()

// Default returns o with unset fields filled.
func (o Options) Default() Options {
	if o.MemoryLimitPages == 0 {
		o.MemoryLimitPages = DefaultMemoryLimitPages
	}
	switch {
	case o.Trusted:
		o.CallTimeout = 0
	case o.CallTimeout == 0:
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxInstances == 0 {
		o.MaxInstances = runtime.GOMAXPROCS(0)
	}
	if o.MaxCallBytes == 0 {
		o.MaxCallBytes = 4 << 20
	}
	if o.Config == nil {
		o.Config = []byte("{}")
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Cache == nil {
		o.Cache = defaultCache
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Validate reports nonsensical options.
func (o Options) Validate() error {
	switch {
	case o.MemoryLimitPages > 65536:
		return fmt.Errorf("hooks: memory limit %d pages is over the 65536 a 32-bit module can address", o.MemoryLimitPages)
	case o.MemoryLimitPages != 0 && o.MemoryLimitPages < 2:
		return fmt.Errorf("hooks: memory limit %d pages is too small for any module", o.MemoryLimitPages)
	case o.CallTimeout < 0:
		return fmt.Errorf("hooks: negative call timeout %v", o.CallTimeout)
	case o.Trusted && o.CallTimeout > 0:
		return fmt.Errorf("hooks: a trusted module has no call timeout (%v set)", o.CallTimeout)
	case o.MaxInstances < 0:
		return fmt.Errorf("hooks: negative instance count %d", o.MaxInstances)
	case o.MaxCallBytes < 0:
		return fmt.Errorf("hooks: negative call size %d", o.MaxCallBytes)
	case o.MaxCallBytes > 1<<30:
		return fmt.Errorf("hooks: call size %d over 1 GiB", o.MaxCallBytes)
	}
	return nil
}
