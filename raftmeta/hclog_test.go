package raftmeta

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestHclogAdapter(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	h := newHclog(l, hclogLevel(slog.LevelWarn))
	raftLog := h.Named("raft").With("node", 1)
	raftLog.Info("entering follower state", "term", 2)
	raftLog.Warn("heartbeat timeout reached", "term", 3)
	raftLog.Error("failed to contact", "id", "2")
	h.StandardLogger(nil).Printf("[ERR] raft-net: failed to accept connection")
	h.StandardLogger(nil).Printf("[INFO] raft-net: dropped")
	if !raftLog.IsWarn() || raftLog.IsInfo() {
		t.Fatal("levels wrong")
	}
	want := `level=WARN msg="heartbeat timeout reached" logger=raft node=1 term=3
level=ERROR msg="failed to contact" logger=raft node=1 id=2
level=ERROR msg="raft-net: failed to accept connection"
`
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
	// SetLevel on a derived logger changes them all, as hclog's does.
	buf.Reset()
	raftLog.SetLevel(hclog.Debug)
	h.Debug("now visible")
	if !strings.Contains(buf.String(), `level=DEBUG msg="now visible"`) {
		t.Fatalf("got %q", buf.String())
	}
}
