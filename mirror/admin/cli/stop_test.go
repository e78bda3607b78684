package cli_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/admin/admintest"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// stopRequests counts the StopMirrorTopics requests b received.
func stopRequests(b *admintest.Broker) int {
	n := 0
	for _, r := range b.Received() {
		if _, ok := r.(*mirrormsg.StopMirrorTopicsRequest); ok {
			n++
		}
	}
	return n
}

// TestStopFailsClosed: a partition that does not reach the barrier
// (paused, read-only) in --barrier-timeout ends the stop with exit 1
// naming it, and no StopMirrorTopics is sent: nothing becomes writable.
// The old stop sent StopMirrorTopics at once, partition by partition.
func TestStopFailsClosed(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyPauseMirrorTopics, topicsHandler(nil, nil))
	b.Handle(mirrormsg.KeyStopMirrorTopics, topicsHandler(nil, nil))
	h, _ := scriptedDescribe([]pstate{{state: "PAUSED"}, {state: "MIRRORING", lag: 7}, {state: "FAILED", lag: -1}})
	b.Handle(mirrormsg.KeyDescribeMirrors, h)

	r := run(t, b, "stop", "m1", "--topic", "orders", "--barrier-timeout", "1s")
	if r.code != 1 || !strings.Contains(r.stderr, "fail closed, nothing was made writable") ||
		!strings.Contains(r.stderr, "orders-1 (MIRRORING)") || strings.Contains(r.stderr, "orders-0") || strings.Contains(r.stderr, "orders-2") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Failed closed: no partition was made writable.") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if n := stopRequests(b); n != 0 {
		t.Fatalf("%d StopMirrorTopics sent by a stop that failed closed", n)
	}

	// --json: the report says so too.
	r = run(t, b, "stop", "m1", "--topic", "orders", "--barrier-timeout", "500ms", "--json")
	if r.code != 1 || !strings.Contains(r.stdout, `"barrier_reached": false`) || !strings.Contains(r.stdout, `"stopped": false`) ||
		!strings.Contains(r.stdout, `"state": "MIRRORING"`) {
		t.Fatalf("--json: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := stopRequests(b); n != 0 {
		t.Fatalf("%d StopMirrorTopics sent by a stop that failed closed", n)
	}
}

// TestStopBarrierRefused: a topic the controller will not pause (its
// barrier cannot be set) fails the stop before anything is stopped;
// MIRROR_TOPIC_ALREADY_PAUSED is not a refusal.
func TestStopBarrierRefused(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyPauseMirrorTopics, topicsHandler(mirrormsg.InvalidClusterMirrorStates, kmsg.StringPtr("busy is STOPPED")))
	b.Handle(mirrormsg.KeyStopMirrorTopics, topicsHandler(nil, nil))
	r := run(t, b, "stop", "m1", "--topic", "orders", "--topic", "busy")
	if r.code != 1 || !strings.Contains(r.stderr, "the barrier could not be set (nothing was made writable): topic busy: ") ||
		!strings.Contains(r.stderr, "busy is STOPPED") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := stopRequests(b); n != 0 {
		t.Fatalf("%d StopMirrorTopics sent", n)
	}
}
