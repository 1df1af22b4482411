package log

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gregorbroker/gregor/core/log/vfs"
)

// dirHealth is shared by every log of a data dir, as Kafka's
// LogDirFailureChannel: the first write or fsync error of any of them takes
// the whole directory offline, for good. After a failed fsync the kernel may
// have dropped the dirty pages and report the next fsync as a success, so
// nothing written to the directory since its last good fsync can be trusted
// (the PostgreSQL fsync lesson); only a restart, which recovers every log
// from its last recovery point, brings the directory back.
type dirHealth struct {
	path string
	// err is the first failure, nil while the directory is online.
	err atomic.Pointer[error]
	// once runs onOffline a single time.
	once      sync.Once
	onOffline func(dir string, err error)
}

// offline returns the failure that took the directory offline, or nil.
func (h *dirHealth) offline() error {
	if e := h.err.Load(); e != nil {
		return *e
	}
	return nil
}

// fail takes the directory offline with err, unless it already is; it returns
// the error that took it offline.
func (h *dirHealth) fail(err error) error {
	if errors.Is(err, ErrStorage) {
		err = fmt.Errorf("log: log dir %s is offline: %w", h.path, err)
	} else {
		err = fmt.Errorf("%w: log dir %s is offline: %w", ErrStorage, h.path, err)
	}
	if !h.err.CompareAndSwap(nil, &err) {
		return h.offline()
	}
	h.once.Do(func() {
		if h.onOffline != nil {
			// Off the caller's goroutine: it holds the log's lock.
			go h.onOffline(h.path, err)
		}
	})
	return err
}

// Offline returns the error that took the data dir offline, or nil while it
// is online. An offline dir refuses every append, read and fsync of its logs
// with an ErrStorage error until the broker restarts.
func (d *Dir) Offline() error { return d.health.offline() }

// Fail takes the data dir offline with err, as a write or fsync error of one
// of its logs does. It is for callers outside this package that write files
// in the data dir themselves (producer snapshots, for example).
func (d *Dir) Fail(err error) error { return d.health.fail(err) }

// Offline returns the error that took the log's data dir offline (or this
// log alone, when it was opened outside a Dir), or nil.
func (l *Log) Offline() error {
	if err := l.health.offline(); err != nil {
		return err
	}
	return nil
}

// FS returns the file system the log lives on, for callers that keep files of
// their own in the log's directory (producer snapshots).
func (l *Log) FS() vfs.FS { return l.opts.FS }

// Fail takes the log's data dir offline with err, as a failed write or fsync
// of the log itself does: a caller that failed to write a file of its own in
// the log's directory (a producer snapshot) calls it. It returns the
// ErrStorage error that took the dir offline.
func (l *Log) Fail(err error) error { return l.health.fail(fmt.Errorf("log %s: %w", l, err)) }
