package e2e

import (
	"slices"
	"testing"
	"time"
)

// TestStartupTime: from exec to the "strait broker ready" line on an empty
// data directory takes under 1 s (DESIGN.md §1: a drop-in node for test
// clusters starts fast). It is the best of three fresh starts, so one
// scheduling hiccup on a loaded machine does not fail it; a slow start
// shows in all three.
func TestStartupTime(t *testing.T) {
	const limit = time.Second
	var took []time.Duration
	for range 3 {
		n := newNode(t)
		p := n.start()
		took = append(took, p.readyAfter())
		t.Logf("start on an empty data dir: ready after %v (the broker's own startup=%s)",
			p.readyAfter().Round(time.Millisecond), firstAttr(p, readyMsg, "startup"))
		if code, _ := n.term(); code != 0 {
			t.Fatalf("SIGTERM: exit code %d", code)
		}
	}
	if best := slices.Min(took); best >= limit {
		t.Fatalf("start-to-ready %v (best of %v), want < %v", best, took, limit)
	}
}

// firstAttr returns attribute key of p's first stderr line containing s.
func firstAttr(p *proc, s, key string) string {
	lines := p.linesWith(s)
	if len(lines) == 0 {
		return ""
	}
	return logAttrs(lines[0])[key]
}
