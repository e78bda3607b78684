package wire

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func readHeartbeat(t *testing.T, c *rawClient) int32 {
	t.Helper()
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.Version = 4
	return c.readResp(resp)
}

// Pipelined requests whose handlers Unmute and finish in reverse order are
// still answered in request order.
func TestPipelinedResponsesInRequestOrder(t *testing.T) {
	p := newProbe()
	s := newTestServer(t, Config{MaxInflightRequests: 8}, nil, heartbeatStandIn(p))
	c := dialRaw(t, s.plaintextAddr())
	const n = 5
	var batch []byte
	for i := range n {
		group := fmt.Sprintf("sleep:%dms:unmute", (n-i)*60)
		batch = append(batch, encodeRequest(int32(i), "c", heartbeat(group, fmt.Sprint(i)))...)
	}
	c.write(batch)
	for i := range n {
		if corr := readHeartbeat(t, c); corr != int32(i) {
			t.Fatalf("response %d has correlation id %d", i, corr)
		}
	}
	if got, want := p.finishOrder(), []string{"4", "3", "2", "1", "0"}; !slices.Equal(got, want) {
		t.Fatalf("handlers finished in order %v, want %v (the test needs them out of order)", got, want)
	}
}

// Without Unmute a connection's requests run one after another, Kafka's
// processing-order guarantee.
func TestRequestsRunInOrderByDefault(t *testing.T) {
	p := newProbe()
	s := newTestServer(t, Config{MaxInflightRequests: 8}, nil, heartbeatStandIn(p))
	c := dialRaw(t, s.plaintextAddr())
	var batch []byte
	batch = append(batch, encodeRequest(1, "c", heartbeat("sleep:150ms", "slow"))...)
	batch = append(batch, encodeRequest(2, "c", heartbeat("", "next"))...)
	sent := time.Now()
	c.write(batch)
	readHeartbeat(t, c)
	readHeartbeat(t, c)
	at, ok := p.startedAt("next")
	if !ok {
		t.Fatal("second request never ran")
	}
	if d := at.Sub(sent); d < 150*time.Millisecond {
		t.Fatalf("second request started %v after sending, before the first finished", d)
	}
	if got, want := p.finishOrder(), []string{"slow", "next"}; !slices.Equal(got, want) {
		t.Fatalf("finish order %v, want %v", got, want)
	}
}

// A handler error closes the connection after the responses before it are
// written; later requests are not run.
func TestHandlerErrorClosesAfterEarlierResponses(t *testing.T) {
	p := newProbe()
	s := newTestServer(t, Config{MaxInflightRequests: 8}, nil, heartbeatStandIn(p))
	c := dialRaw(t, s.plaintextAddr())
	var batch []byte
	batch = append(batch, encodeRequest(1, "c", heartbeat("sleep:100ms:unmute", "slow"))...)
	batch = append(batch, encodeRequest(2, "c", heartbeat("fail", "fail"))...)
	batch = append(batch, encodeRequest(3, "c", heartbeat("", "after"))...)
	c.write(batch)
	if corr := readHeartbeat(t, c); corr != 1 {
		t.Fatalf("correlation id %d, want 1", corr)
	}
	c.expectClosed(5 * time.Second)
	if _, ran := p.startedAt("after"); ran {
		t.Fatal("a request after the failed one was handled")
	}
	if got := p.handled.Load(); got != 2 {
		t.Fatalf("%d requests handled, want 2", got)
	}
	apiVersionsOK(t, s.plaintextAddr())
}

// A handler that answers nothing (Produce with acks=0) keeps its place:
// the responses after it still come in order.
func TestNoResponseKeepsOrder(t *testing.T) {
	s := newTestServer(t, Config{MaxInflightRequests: 8}, nil, heartbeatStandIn(newProbe()))
	c := dialRaw(t, s.plaintextAddr())
	var batch []byte
	batch = append(batch, encodeRequest(1, "c", heartbeat("noresp", "a"))...)
	batch = append(batch, encodeRequest(2, "c", heartbeat("sleep:30ms", "b"))...)
	batch = append(batch, encodeRequest(3, "c", heartbeat("noresp", "c"))...)
	batch = append(batch, encodeRequest(4, "c", heartbeat("", "d"))...)
	batch = append(batch, encodeRequest(5, "c", heartbeat("noresp", "e"))...)
	c.write(batch)
	for _, want := range []int32{2, 4} {
		if corr := readHeartbeat(t, c); corr != want {
			t.Fatalf("correlation id %d, want %d", corr, want)
		}
	}
	if b, err := c.tryReadFrame(200 * time.Millisecond); err == nil {
		t.Fatalf("unexpected extra response % x", b)
	}
}

// findCoordinatorStandIn answers FindCoordinator (key 10) at once,
// recording the request under its key in the probe.
func findCoordinatorStandIn(p *probe) api {
	return api{key: 10, min: 0, max: 6, handle: func(_ *Server, _ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.FindCoordinatorRequest)
		p.start(req.CoordinatorKey)
		defer p.finish(req.CoordinatorKey)
		return req.ResponseKind(), nil
	}}
}

func findCoordinator(name string) *kmsg.FindCoordinatorRequest {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 3
	req.CoordinatorKey = name
	return req
}

// Unmute lets only a request of the same API key start early. A request of
// another key waits until every request before it has been handled, early
// starters included, as Kafka runs a connection's requests one at a time:
// a Metadata request behind a waiting acks=all produce must see the
// cluster as it is once the produce is answered.
func TestUnmuteLetsOnlyTheSameKeyStartEarly(t *testing.T) {
	p := newProbe()
	s := newTestServer(t, Config{MaxInflightRequests: 8}, nil, heartbeatStandIn(p), findCoordinatorStandIn(p))
	c := dialRaw(t, s.plaintextAddr())
	var batch []byte
	batch = append(batch, encodeRequest(1, "c", heartbeat("sleep:300ms:unmute", "slow"))...)
	batch = append(batch, encodeRequest(2, "c", heartbeat("sleep:50ms:unmute", "quick"))...)
	batch = append(batch, encodeRequest(3, "c", findCoordinator("other"))...)
	batch = append(batch, encodeRequest(4, "c", heartbeat("", "last"))...)
	sent := time.Now()
	c.write(batch)
	for want := int32(1); want <= 2; want++ {
		if corr := readHeartbeat(t, c); corr != want {
			t.Fatalf("response %d has correlation id %d", want, corr)
		}
	}
	fc := kmsg.NewPtrFindCoordinatorResponse()
	fc.Version = 3
	if corr := c.readResp(fc); corr != 3 {
		t.Fatalf("FindCoordinator answered with correlation id %d", corr)
	}
	if corr := readHeartbeat(t, c); corr != 4 {
		t.Fatalf("last response has correlation id %d", corr)
	}
	// The same-key heartbeat started while the first one waited.
	if got, want := p.finishOrder(), []string{"quick", "slow", "other", "last"}; !slices.Equal(got, want) {
		t.Fatalf("handlers finished in order %v, want %v", got, want)
	}
	at, ok := p.startedAt("other")
	if !ok {
		t.Fatal("FindCoordinator never ran")
	}
	if d := at.Sub(sent); d < 300*time.Millisecond {
		t.Fatalf("FindCoordinator started %v after sending, before the unmuted heartbeat ahead of it finished", d)
	}
}

// Requests read while an earlier one of the connection runs are taken by
// its runner when it finishes (runqueue.go), not each handed to a worker
// of its own to wait there: 200 pipelined requests behind a slow one cost
// a handful of hand-offs, not 200. The order and the answers are as ever.
func TestPipelinedRequestsShareTheRunner(t *testing.T) {
	p := newProbe()
	s := newTestServer(t, Config{MaxInflightRequests: 256}, nil, heartbeatStandIn(p))
	c := dialRaw(t, s.plaintextAddr())
	const n = 200
	var batch []byte
	batch = append(batch, encodeRequest(0, "c", heartbeat("sleep:300ms", "slow"))...)
	for i := 1; i < n; i++ {
		batch = append(batch, encodeRequest(int32(i), "c", heartbeat("", fmt.Sprint(i)))...)
	}
	before := s.workers.started.Load()
	c.write(batch)
	for i := range n {
		if corr := readHeartbeat(t, c); corr != int32(i) {
			t.Fatalf("response %d has correlation id %d", i, corr)
		}
	}
	// The batch is ~10 KB, read in one or a few passes while the first
	// request sleeps; each pass may find the runner busy or idle.
	if got := s.workers.started.Load() - before; got > 5 {
		t.Fatalf("%d pipelined requests were handed to workers %d times, want them run by the connection's runner", n, got)
	}
}
