package replication

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/strait-io/strait/raftmeta"
)

// lockedBuffer is a bytes.Buffer a logger writes and a test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

// A restarting node's first image may hold only part of the metadata log
// (raft hands a follower the entries it missed in batches). Applying it
// calls no log stray; WarnStrayLogs, which the node calls once caught up,
// names exactly the logs whose topic the metadata no longer has.
func TestStrayLogsAreFoundOnceCaughtUp(t *testing.T) {
	var logged lockedBuffer
	withLog := func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logged, nil)) }
	h := newHarness(t, withLog)
	h.createTopic("kept", topicSpec{})
	h.createTopic("later", topicSpec{})
	h.createTopic("gone", topicSpec{})
	full := cloneImage(h.img) // "gone" is deleted while the node is down
	delete(full.TopicsByID, full.Topics["gone"].ID)
	delete(full.Topics, "gone")
	partial := cloneImage(full) // the first batch of the replay
	delete(partial.TopicsByID, partial.Topics["later"].ID)
	delete(partial.Topics, "later")
	h.close()

	h.open(withLog)
	h.apply(&raftmeta.Delta{}, partial)
	if got := logged.lines("stray log"); len(got) != 0 {
		t.Fatalf("a partial first image called logs stray: %q", got)
	}
	h.rm.WarnStrayLogs(full)
	got := logged.lines("stray log")
	if len(got) != 1 || !strings.Contains(got[0], "partition=gone-0") {
		t.Fatalf("stray logs once caught up: %q, want gone-0 alone", got)
	}
}
