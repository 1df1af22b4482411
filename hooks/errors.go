package hooks

import (
	"errors"
	"fmt"
)

// Errors a module can cause. They are wrapped with the module's path and
// what failed; test with errors.Is.
var (
	// ErrNotWasm: the file does not start with the WebAssembly magic number.
	ErrNotWasm = errors.New("not a WebAssembly module")
	// ErrInvalid: the file claims to be WebAssembly but does not compile.
	ErrInvalid = errors.New("invalid WebAssembly module")
	// ErrNoVersion: the module does not export gregor_abi_version.
	ErrNoVersion = errors.New("no ABI version marker (gregor_abi_version)")
	// ErrABIVersion: gregor_abi_version returned a version the host does not speak.
	ErrABIVersion = errors.New("unsupported ABI version")
	// ErrMissingExport: an export the ABI or the kind needs is absent.
	ErrMissingExport = errors.New("missing export")
	// ErrBadExport: an export has the wrong type or signature.
	ErrBadExport = errors.New("export has the wrong signature")
	// ErrInstantiate: the module failed to start (imports, start function).
	ErrInstantiate = errors.New("module failed to start")
	// ErrConfig: gregor_configure rejected the configuration.
	ErrConfig = errors.New("module rejected its configuration")
	// ErrTrap: the guest trapped (unreachable, out-of-bounds access, ...).
	ErrTrap = errors.New("guest trapped")
	// ErrExit: the guest exited (a Go guest's fatal error, proc_exit).
	ErrExit = errors.New("guest exited")
	// ErrTimeout: a call ran past Options.CallTimeout and was stopped.
	ErrTimeout = errors.New("call timed out")
	// ErrMemoryLimit: the guest ran out of memory under Options.MemoryLimitPages.
	ErrMemoryLimit = errors.New("guest memory limit reached")
	// ErrBadBuffer: gregor_alloc returned no buffer or one outside memory.
	ErrBadBuffer = errors.New("guest returned an unusable buffer")
	// ErrGuest: the guest returned an error code (see GuestError).
	ErrGuest = errors.New("guest reported an error")
	// ErrClosed: the module was closed.
	ErrClosed = errors.New("module closed")
	// ErrTooLarge: one input is larger than Options.MaxCallBytes.
	ErrTooLarge = errors.New("input too large for one call")
)

// GuestError is a non-zero result code from a guest call. It matches
// ErrGuest with errors.Is.
type GuestError struct {
	Code int32
}

func (e *GuestError) Error() string {
	return fmt.Sprintf("guest returned code %d (%s)", e.Code, codeName(e.Code))
}

// Is makes errors.Is(err, ErrGuest) true.
func (e *GuestError) Is(target error) bool { return target == ErrGuest }

func codeName(c int32) string {
	switch c {
	case 1:
		return "bad input"
	case 2:
		return "bad configuration"
	case 3:
		return "failed"
	case 4:
		return "no handler registered"
	}
	return "unknown code"
}
