package plugins

import "errors"

// Error classes, wrapped by every error this package returns so callers and
// tests can tell them apart with errors.Is.
var (
	// ErrStart: the plugin binary did not start, failed the handshake or
	// refused its configuration.
	ErrStart = errors.New("extension did not start")
	// ErrUnavailable: the process is down (it crashed or was killed after
	// a timeout) and a restart is pending or under way.
	ErrUnavailable = errors.New("extension unavailable")
	// ErrTimeout: a call took longer than the call timeout; the process is
	// killed and restarted.
	ErrTimeout = errors.New("extension call timed out")
	// ErrExtension: the extension answered with an error of its own, or
	// with an answer that breaks its contract (a partition out of range).
	ErrExtension = errors.New("extension failed")
	// ErrClosed: the host was closed.
	ErrClosed = errors.New("extension closed")
)
