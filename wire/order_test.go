package wire

import (
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
