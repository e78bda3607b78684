package fetcher

import (
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// KgoLogger routes a fetch client's logs to l, warnings and errors only:
// connection churn is the fetcher's to report, with its own context. The
// followers' clients and the mirror's source client both use it.
func KgoLogger(l *slog.Logger) kgo.Logger { return kgoLogger{l} }

type kgoLogger struct{ l *slog.Logger }

func (k kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (k kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	switch level {
	case kgo.LogLevelError:
		k.l.Error(msg, keyvals...)
	case kgo.LogLevelWarn:
		k.l.Warn(msg, keyvals...)
	default:
		k.l.Debug(msg, keyvals...)
	}
}
