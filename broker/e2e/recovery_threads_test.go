package e2e

import "testing"

// TestRecoveryThreadsFromConfig: num.recovery.threads.per.data.dir set on
// the command line is the number of logs the log directory opens at once
// (Kafka's LogManager thread pool per data directory), not the default 2.
func TestRecoveryThreadsFromConfig(t *testing.T) {
	n := newNode(t, "num.recovery.threads.per.data.dir=5")
	p := n.start()
	lines := p.linesWith("log directory loaded")
	if len(lines) == 0 {
		t.Fatalf("no \"log directory loaded\" line; stderr:\n%s", p.stderr())
	}
	for _, l := range lines {
		if got := logAttrs(l)["loadThreads"]; got != "5" {
			t.Errorf("loadThreads=%s, want the configured 5: %s", got, l)
		}
	}
	if ignored := p.linesWith("num.recovery.threads.per.data.dir"); len(ignored) > 0 {
		t.Errorf("the key is still reported: %q", ignored)
	}
}
