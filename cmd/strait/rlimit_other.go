//go:build !unix

package main

import "log/slog"

// raiseOpenFileLimit: no RLIMIT_NOFILE here; nothing is derived from it.
func raiseOpenFileLimit(*slog.Logger) uint64 { return 0 }
