package plugins

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// slogHCLog lets go-plugin log into the broker's slog logger. go-plugin
// re-logs a plugin's stderr through it: JSON lines (the sdk's logger) at
// their own level with their attributes, other lines at debug level, and a
// Go panic's lines at error level.
type slogHCLog struct {
	l       *slog.Logger
	name    string
	implied []any
}

var _ hclog.Logger = (*slogHCLog)(nil)

func newHCLog(l *slog.Logger) hclog.Logger { return &slogHCLog{l: l} }

func slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace, hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (h *slogHCLog) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	l := h.l
	if h.name != "" {
		l = l.With("plugin_log", h.name)
	}
	l.Log(context.Background(), slogLevel(level), msg, args...)
}

func (h *slogHCLog) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }
func (h *slogHCLog) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }
func (h *slogHCLog) Info(msg string, args ...any)  { h.Log(hclog.Info, msg, args...) }
func (h *slogHCLog) Warn(msg string, args ...any)  { h.Log(hclog.Warn, msg, args...) }
func (h *slogHCLog) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

func (h *slogHCLog) enabled(level hclog.Level) bool {
	return h.l.Enabled(context.Background(), slogLevel(level))
}

func (h *slogHCLog) IsTrace() bool { return h.enabled(hclog.Trace) }
func (h *slogHCLog) IsDebug() bool { return h.enabled(hclog.Debug) }
func (h *slogHCLog) IsInfo() bool  { return h.enabled(hclog.Info) }
func (h *slogHCLog) IsWarn() bool  { return h.enabled(hclog.Warn) }
func (h *slogHCLog) IsError() bool { return h.enabled(hclog.Error) }

func (h *slogHCLog) ImpliedArgs() []any { return h.implied }

func (h *slogHCLog) With(args ...any) hclog.Logger {
	return &slogHCLog{l: h.l.With(args...), name: h.name, implied: append(append([]any(nil), h.implied...), args...)}
}

func (h *slogHCLog) Name() string { return h.name }

func (h *slogHCLog) Named(name string) hclog.Logger {
	n := name
	if h.name != "" {
		n = h.name + "." + name
	}
	return &slogHCLog{l: h.l, name: n, implied: h.implied}
}

func (h *slogHCLog) ResetNamed(name string) hclog.Logger {
	return &slogHCLog{l: h.l, name: name, implied: h.implied}
}

// SetLevel is ignored: the broker's slog handler decides what is logged.
func (h *slogHCLog) SetLevel(hclog.Level) {}

func (h *slogHCLog) GetLevel() hclog.Level {
	switch {
	case h.enabled(hclog.Debug):
		return hclog.Trace
	case h.enabled(hclog.Info):
		return hclog.Info
	case h.enabled(hclog.Warn):
		return hclog.Warn
	}
	return hclog.Error
}

func (h *slogHCLog) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(h.StandardWriter(opts), "", 0)
}

func (h *slogHCLog) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return &lineWriter{log: func(line string) { h.Info(line) }}
}

// lineWriter calls log once per complete line written to it; a partial
// line waits for its end (or is cut at maxLine bytes).
type lineWriter struct {
	log func(line string)

	mu  sync.Mutex // guards buf
	buf []byte
}

const maxLine = 64 << 10

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxLine - len(w.buf)
			if len(p) < room {
				w.buf = append(w.buf, p...)
				break
			}
			w.buf = append(w.buf, p[:room]...)
			p = p[room:]
		} else {
			w.buf = append(w.buf, p[:i]...)
			p = p[i+1:]
		}
		w.log(string(bytes.TrimRight(w.buf, "\r")))
		w.buf = w.buf[:0]
	}
	return n, nil
}
