package raftmeta

import (
	"context"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// hclogAdapter sends hashicorp/raft's logging (hclog) to a *slog.Logger,
// dropping lines below its level (warn by default: raft logs every election
// and snapshot at info).
type hclogAdapter struct {
	l       *slog.Logger
	name    string
	implied []any
	level   *atomic.Int32 // an hclog.Level, shared by derived loggers
}

var _ hclog.Logger = (*hclogAdapter)(nil)

func newHclog(l *slog.Logger, level hclog.Level) *hclogAdapter {
	lv := new(atomic.Int32)
	lv.Store(int32(level))
	return &hclogAdapter{l: l, level: lv}
}

// hclogLevel maps a slog level onto hclog's scale.
func hclogLevel(l slog.Level) hclog.Level {
	switch {
	case l < slog.LevelDebug:
		return hclog.Trace
	case l < slog.LevelInfo:
		return hclog.Debug
	case l < slog.LevelWarn:
		return hclog.Info
	case l < slog.LevelError:
		return hclog.Warn
	default:
		return hclog.Error
	}
}

func slogLevel(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace:
		return slog.LevelDebug - 4
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Info, hclog.NoLevel, hclog.DefaultLevel:
		return slog.LevelInfo
	case hclog.Warn:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

func (h *hclogAdapter) enabled(l hclog.Level) bool {
	min := hclog.Level(h.level.Load())
	return min != hclog.Off && l >= min
}

func (h *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off || !h.enabled(level) {
		return
	}
	attrs := make([]any, 0, len(h.implied)+len(args)+2)
	if h.name != "" {
		attrs = append(attrs, "logger", h.name)
	}
	attrs = append(attrs, h.implied...)
	attrs = append(attrs, args...)
	h.l.Log(context.Background(), slogLevel(level), msg, attrs...)
}

func (h *hclogAdapter) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }
func (h *hclogAdapter) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }
func (h *hclogAdapter) Info(msg string, args ...any)  { h.Log(hclog.Info, msg, args...) }
func (h *hclogAdapter) Warn(msg string, args ...any)  { h.Log(hclog.Warn, msg, args...) }
func (h *hclogAdapter) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

func (h *hclogAdapter) IsTrace() bool { return h.enabled(hclog.Trace) }
func (h *hclogAdapter) IsDebug() bool { return h.enabled(hclog.Debug) }
func (h *hclogAdapter) IsInfo() bool  { return h.enabled(hclog.Info) }
func (h *hclogAdapter) IsWarn() bool  { return h.enabled(hclog.Warn) }
func (h *hclogAdapter) IsError() bool { return h.enabled(hclog.Error) }

func (h *hclogAdapter) ImpliedArgs() []any { return h.implied }

func (h *hclogAdapter) With(args ...any) hclog.Logger {
	c := *h
	c.implied = append(append([]any(nil), h.implied...), args...)
	return &c
}

func (h *hclogAdapter) Name() string { return h.name }

func (h *hclogAdapter) Named(name string) hclog.Logger {
	c := *h
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (h *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *h
	c.name = name
	return &c
}

func (h *hclogAdapter) SetLevel(level hclog.Level) { h.level.Store(int32(level)) }
func (h *hclogAdapter) GetLevel() hclog.Level      { return hclog.Level(h.level.Load()) }

func (h *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(h.StandardWriter(opts), "", 0)
}

func (h *hclogAdapter) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	level := hclog.Info
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = opts.ForceLevel
	}
	return hclogWriter{h: h, level: level}
}

// hclogWriter turns the lines of a standard *log.Logger into log calls;
// raft's network transport writes through one.
type hclogWriter struct {
	h     *hclogAdapter
	level hclog.Level
}

func (w hclogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	level := w.level
	// The transport prefixes its lines the way hclog's own writer parses.
	for prefix, l := range map[string]hclog.Level{"[ERR]": hclog.Error, "[ERROR]": hclog.Error, "[WARN]": hclog.Warn, "[INFO]": hclog.Info, "[DEBUG]": hclog.Debug, "[TRACE]": hclog.Trace} {
		if strings.HasPrefix(msg, prefix) {
			level = l
			msg = strings.TrimSpace(strings.TrimPrefix(msg, prefix))
			break
		}
	}
	w.h.Log(level, msg)
	return len(p), nil
}
