package wire

import (
	"fmt"
	"log/slog"
)

// gnetLogger routes gnet's printf-style logging into the server's slog
// logger. gnet's Info lines are start-up chatter, so they go to Debug.
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) Debugf(format string, args ...any) { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g gnetLogger) Infof(format string, args ...any)  { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g gnetLogger) Warnf(format string, args ...any)  { g.l.Warn(fmt.Sprintf(format, args...)) }
func (g gnetLogger) Errorf(format string, args ...any) { g.l.Error(fmt.Sprintf(format, args...)) }

// Fatalf logs at Error: a library must not end the process.
func (g gnetLogger) Fatalf(format string, args ...any) { g.l.Error(fmt.Sprintf(format, args...)) }
