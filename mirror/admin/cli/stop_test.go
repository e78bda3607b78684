package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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

// TestStopLagGuardRefused: the barrier stop sends the RPO guard's bound
// (--max-lag-ms, --max-lag-records, --force) with its StopMirrorTopics;
// a topic the broker refuses for its lag (POLICY_VIOLATION) ends the stop
// with exit 1 naming each partition with its lag and the bound, the topic
// left paused (fail closed), in text and --json.
func TestStopLagGuardRefused(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyPauseMirrorTopics, topicsHandler(nil, nil))
	b.Handle(mirrormsg.KeyStopMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.(*mirrormsg.StopMirrorTopicsRequest)
		resp := r.ResponseKind().(*mirrormsg.StopMirrorTopicsResponse)
		for _, tm := range r.Topics {
			tr := mirrormsg.NewStopMirrorTopicsResponseTopicResult()
			tr.Name = tm.TopicName
			if !r.Force {
				tr.ErrorCode, tr.ErrorMessage = kerr.PolicyViolation.Code, kmsg.StringPtr("lag over the failover bound")
				o := mirrormsg.NewStopMirrorTopicsResponseLagOverBoundPartition()
				o.PartitionIndex, o.Lag, o.LagMs, o.MaxLagRecords, o.MaxLagMs = 1, 7, 9000, r.MaxLagRecords, r.MaxLagMs
				tr.LagOverBound = append(tr.LagOverBound, o)
			}
			resp.Topics = append(resp.Topics, tr)
		}
		return resp
	})
	h, _ := scriptedDescribe([]pstate{{state: "PAUSED"}, {state: "PAUSED", lag: 7, lagMs: 9000}})
	b.Handle(mirrormsg.KeyDescribeMirrors, h)

	r := run(t, b, "stop", "m1", "--topic", "orders", "--max-lag-ms", "5000", "--max-lag-records", "5")
	if r.code != 1 || !strings.Contains(r.stderr, "POLICY_VIOLATION") || !strings.Contains(r.stderr, "stay paused") ||
		!strings.Contains(r.stderr, "orders partition 1: lag 7 records") || !strings.Contains(r.stderr, "bound 5 records, 5000 ms") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var sent []*mirrormsg.StopMirrorTopicsRequest
	for _, q := range b.Received() {
		if s, ok := q.(*mirrormsg.StopMirrorTopicsRequest); ok {
			sent = append(sent, s)
		}
	}
	if len(sent) != 1 || sent[0].MaxLagMs != 5000 || sent[0].MaxLagRecords != 5 || sent[0].Force {
		t.Fatalf("StopMirrorTopics sent: %+v, want one with MaxLagMs 5000, MaxLagRecords 5, no Force", sent)
	}

	r = run(t, b, "stop", "m1", "--topic", "orders", "--max-lag-records", "5", "--json")
	if r.code != 1 || !strings.Contains(r.stdout, `"barrier_reached": true`) || !strings.Contains(r.stdout, `"stopped": false`) ||
		!strings.Contains(r.stdout, `"lag_over_bound": [`) || !strings.Contains(r.stdout, `"max_lag_records": 5`) ||
		!strings.Contains(r.stdout, `"max_lag_ms": -1`) {
		t.Fatalf("--json: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	if r := run(t, b, "stop", "m1", "--topic", "orders", "--max-lag-ms", "-2"); r.code != 2 || !strings.Contains(r.stderr, "--max-lag-ms must be 0 or more") {
		t.Fatalf("--max-lag-ms -2: exit %d\n%s", r.code, r.stderr)
	}
}

// TestStopFailsClosedNamesPartitionsAfterSlowDescribe: when no describe
// answers within --barrier-timeout (a destination broker down holds the
// brokers' describe fan-out for seconds), the stop still fails closed
// naming the partitions not at the barrier, from one more describe, not
// with a bare "context deadline exceeded". Before, it named none.
func TestStopFailsClosedNamesPartitionsAfterSlowDescribe(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyPauseMirrorTopics, topicsHandler(nil, nil))
	b.Handle(mirrormsg.KeyStopMirrorTopics, topicsHandler(nil, nil))
	h, calls := scriptedDescribe([]pstate{{state: "PAUSED"}, {state: "UNKNOWN", lag: -1}})
	b.Handle(mirrormsg.KeyDescribeMirrors, func(ctx context.Context, req kmsg.Request) kmsg.Response {
		if calls() == 0 {
			time.Sleep(800 * time.Millisecond) // longer than the barrier timeout
		}
		return h(ctx, req)
	})

	r := run(t, b, "stop", "m1", "--topic", "orders", "--barrier-timeout", "300ms", "--json")
	if r.code != 1 || !strings.Contains(r.stderr, "fail closed, nothing was made writable") || !strings.Contains(r.stderr, "orders-1 (UNKNOWN)") ||
		strings.Contains(r.stderr, "orders-0") || !strings.Contains(r.stdout, `"state": "UNKNOWN"`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := stopRequests(b); n != 0 {
		t.Fatalf("%d StopMirrorTopics sent by a stop that failed closed", n)
	}
}
