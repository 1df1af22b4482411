package controller

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// raftLogger lets raft log through slog. Raft's levels map onto slog's
// (trace becomes debug-4).
type raftLogger struct {
	l       *slog.Logger
	name    string
	implied []any
}

var _ hclog.Logger = (*raftLogger)(nil)

func newRaftLogger(l *slog.Logger) *raftLogger { return &raftLogger{l: l} }

const slogTrace = slog.LevelDebug - 4

func toSlog(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace:
		return slogTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (r *raftLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	if !r.l.Enabled(context.Background(), toSlog(level)) {
		return
	}
	out := make([]any, 0, len(args)+2)
	if r.name != "" {
		out = append(out, "logger", r.name)
	}
	for _, a := range args {
		// hclog.Fmt values carry a format and its arguments.
		if f, ok := a.(hclog.Format); ok && len(f) > 0 {
			if format, ok := f[0].(string); ok {
				a = fmt.Sprintf(format, f[1:]...)
			}
		}
		out = append(out, a)
	}
	args = out
	r.l.Log(context.Background(), toSlog(level), msg, args...)
}

func (r *raftLogger) Trace(msg string, args ...any) { r.Log(hclog.Trace, msg, args...) }
func (r *raftLogger) Debug(msg string, args ...any) { r.Log(hclog.Debug, msg, args...) }
func (r *raftLogger) Info(msg string, args ...any)  { r.Log(hclog.Info, msg, args...) }
func (r *raftLogger) Warn(msg string, args ...any)  { r.Log(hclog.Warn, msg, args...) }
func (r *raftLogger) Error(msg string, args ...any) { r.Log(hclog.Error, msg, args...) }

func (r *raftLogger) enabled(l slog.Level) bool { return r.l.Enabled(context.Background(), l) }

func (r *raftLogger) IsTrace() bool { return r.enabled(slogTrace) }
func (r *raftLogger) IsDebug() bool { return r.enabled(slog.LevelDebug) }
func (r *raftLogger) IsInfo() bool  { return r.enabled(slog.LevelInfo) }
func (r *raftLogger) IsWarn() bool  { return r.enabled(slog.LevelWarn) }
func (r *raftLogger) IsError() bool { return r.enabled(slog.LevelError) }

func (r *raftLogger) ImpliedArgs() []any { return r.implied }

func (r *raftLogger) With(args ...any) hclog.Logger {
	return &raftLogger{l: r.l.With(args...), name: r.name, implied: append(append([]any(nil), r.implied...), args...)}
}

func (r *raftLogger) Name() string { return r.name }

func (r *raftLogger) Named(name string) hclog.Logger {
	if r.name != "" {
		name = r.name + "." + name
	}
	return &raftLogger{l: r.l, name: name, implied: r.implied}
}

func (r *raftLogger) ResetNamed(name string) hclog.Logger {
	return &raftLogger{l: r.l, name: name, implied: r.implied}
}

// SetLevel is a no-op: the slog handler decides what is emitted.
func (r *raftLogger) SetLevel(hclog.Level) {}

func (r *raftLogger) GetLevel() hclog.Level {
	switch {
	case r.IsTrace():
		return hclog.Trace
	case r.IsDebug():
		return hclog.Debug
	case r.IsInfo():
		return hclog.Info
	case r.IsWarn():
		return hclog.Warn
	}
	return hclog.Error
}

func (r *raftLogger) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	return slog.NewLogLogger(r.l.Handler(), slog.LevelInfo)
}

func (r *raftLogger) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	return r.StandardLogger(opts).Writer()
}
