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
	b.Handle(mirrormsg.KeySyncMirrorGroupOffsets, syncHandler(func(*mirrormsg.SyncMirrorGroupOffsetsResponse) {}))

	r := run(t, b, "stop", "m1", "--topic", "orders", "--max-lag-ms", "5000", "--max-lag-records", "5")
	if r.code != 1 || !strings.Contains(r.stderr, "POLICY_VIOLATION") || !strings.Contains(r.stderr, "stay paused") ||
		!strings.Contains(r.stderr, "orders partition 1: lag 7 records") || !strings.Contains(r.stderr, "bound 5 records, 5000 ms") ||
		!strings.Contains(r.stderr, "nothing was stopped") {
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
		!strings.Contains(r.stdout, `"max_lag_ms": -1`) || !strings.Contains(r.stdout, `"stopped_topics": []`) {
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

// syncHandler answers SyncMirrorGroupOffsets with resp's fields.
func syncHandler(fill func(*mirrormsg.SyncMirrorGroupOffsetsResponse)) admintest.HandlerFunc {
	return func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.(*mirrormsg.SyncMirrorGroupOffsetsRequest)
		resp := r.ResponseKind().(*mirrormsg.SyncMirrorGroupOffsetsResponse)
		resp.MirrorName, resp.SyncerBrokerID = r.MirrorName, 1
		fill(resp)
		return resp
	}
}

// refuseStop answers every StopMirrorTopics topic INVALID_CLUSTER_MIRROR_STATES,
// which ends a stop right after it was sent.
func refuseStop(_ context.Context, req kmsg.Request) kmsg.Response {
	r := req.(*mirrormsg.StopMirrorTopicsRequest)
	resp := r.ResponseKind().(*mirrormsg.StopMirrorTopicsResponse)
	for _, tm := range r.Topics {
		tr := mirrormsg.NewStopMirrorTopicsResponseTopicResult()
		tr.Name, tr.ErrorCode = tm.TopicName, mirrormsg.InvalidClusterMirrorStates.Code
		resp.Topics = append(resp.Topics, tr)
	}
	return resp
}

// requestOrder is the index in b.Received of the first request of each
// key.
func requestOrder(b *admintest.Broker) map[int16]int {
	out := map[int16]int{}
	for i, r := range b.Received() {
		if _, ok := out[r.Key()]; !ok {
			out[r.Key()] = i
		}
	}
	return out
}

// TestStopSyncsGroupOffsetsAtBarrier: once every partition is at rest,
// and before StopMirrorTopics, the stop asks for the last group offset
// sync of its topics, and reports it per group (text and --json). The old
// stop never asked.
func TestStopSyncsGroupOffsetsAtBarrier(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyPauseMirrorTopics, topicsHandler(nil, nil))
	b.Handle(mirrormsg.KeyStopMirrorTopics, refuseStop)
	h, _ := scriptedDescribe([]pstate{{state: "PAUSED"}, {state: "PAUSED"}})
	b.Handle(mirrormsg.KeyDescribeMirrors, h)
	b.Handle(mirrormsg.KeySyncMirrorGroupOffsets, syncHandler(func(r *mirrormsg.SyncMirrorGroupOffsetsResponse) {
		r.LastGroupSyncMs = 1_700_000_000_000
		r.Groups = []mirrormsg.SyncMirrorGroupOffsetsResponseGroup{
			{GroupID: "billing", Partitions: []mirrormsg.SyncMirrorGroupOffsetsResponsePartition{
				{TopicName: "orders", PartitionIndex: 0, SourceOffset: 40, CommittedOffset: 40, Outcome: "synced"},
				{TopicName: "orders", PartitionIndex: 1, SourceOffset: 90, CommittedOffset: 80, Outcome: "synced"},
			}},
			{GroupID: "live", SkipReason: kmsg.StringPtr("group-active")},
		}
	}))

	r := run(t, b, "stop", "m1", "--topic", "orders")
	if r.code != 1 || !strings.Contains(r.stdout, "Group offsets synced at the barrier by broker 1 (2 groups):") ||
		!strings.Contains(r.stdout, "billing") || !strings.Contains(r.stdout, "skipped: group-active") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	order := requestOrder(b)
	si, ok1 := order[mirrormsg.KeySyncMirrorGroupOffsets]
	st, ok2 := order[mirrormsg.KeyStopMirrorTopics]
	if !ok1 || !ok2 || si > st {
		t.Fatalf("SyncMirrorGroupOffsets at %d (%t), StopMirrorTopics at %d (%t): the sync must come first", si, ok1, st, ok2)
	}
	for _, q := range b.Received() {
		if s, ok := q.(*mirrormsg.SyncMirrorGroupOffsetsRequest); ok && (s.MirrorName != "m1" || len(s.Topics) != 1 || s.Topics[0] != "orders") {
			t.Fatalf("sync request %+v, want mirror m1, topics [orders]", s)
		}
	}

	r = run(t, b, "stop", "m1", "--topic", "orders", "--json")
	for _, want := range []string{`"group_offsets": {`, `"synced": true`, `"syncer_broker": 1`, `"group": "billing"`,
		`"partitions_synced": 2`, `"skip_reason": "group-active"`, `"outcome": "synced"`, `"committed_offset": 80`} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("--json lacks %s: exit %d\nstdout:\n%s\nstderr:\n%s", want, r.code, r.stdout, r.stderr)
		}
	}
}

// TestStopOffsetSyncSourceDown: a sync that cannot reach the source does
// not fail the stop (it goes on to StopMirrorTopics) and says which sync's
// offsets stand; with --require-offset-sync the stop fails closed before
// StopMirrorTopics.
func TestStopOffsetSyncSourceDown(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyPauseMirrorTopics, topicsHandler(nil, nil))
	b.Handle(mirrormsg.KeyStopMirrorTopics, refuseStop)
	h, _ := scriptedDescribe([]pstate{{state: "PAUSED", lag: -1}})
	b.Handle(mirrormsg.KeyDescribeMirrors, h)
	b.Handle(mirrormsg.KeySyncMirrorGroupOffsets, syncHandler(func(r *mirrormsg.SyncMirrorGroupOffsetsResponse) {
		r.ErrorCode, r.ErrorMessage = kerr.NetworkException.Code, kmsg.StringPtr("listing the source's groups: dial tcp: connection refused")
		r.LastGroupSyncMs = 1_700_000_000_000
	}))

	r := run(t, b, "stop", "m1", "--topic", "orders", "--json")
	if !strings.Contains(r.stderr, "warning: group offsets not synced at the barrier (NETWORK_EXCEPTION: listing the source's groups") ||
		!strings.Contains(r.stderr, "the last completed sync (2023-11-14T22:13:20Z) stands") ||
		!strings.Contains(r.stdout, `"synced": false`) || !strings.Contains(r.stdout, `"last_sync": "2023-11-14T`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := stopRequests(b); n != 1 {
		t.Fatalf("%d StopMirrorTopics sent, want 1: a dead source does not fail the stop", n)
	}

	r = run(t, b, "stop", "m1", "--topic", "orders", "--require-offset-sync")
	if r.code != 1 || !strings.Contains(r.stderr, "--require-offset-sync was given: fail closed, nothing was made writable") ||
		!strings.Contains(r.stdout, "Group offsets NOT synced at the barrier: NETWORK_EXCEPTION") {
		t.Fatalf("--require-offset-sync: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := stopRequests(b); n != 1 {
		t.Fatalf("%d StopMirrorTopics sent in all, want 1: --require-offset-sync must fail closed", n)
	}
}
