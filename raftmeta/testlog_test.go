package raftmeta

import (
	"log/slog"
	"os"
)

// RAFTMETA_DEBUG=1 sends the cluster tests' node logs to stderr.
func init() {
	if os.Getenv("RAFTMETA_DEBUG") != "" {
		testLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
}
