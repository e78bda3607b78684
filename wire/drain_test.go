package wire

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// A handler parked the way a long-poll Fetch is (waiting on
// reqctx.Draining as well as its own timeout) answers as soon as Shutdown
// begins, and the answer still reaches the client before the connection
// closes, so a parked request does not hold a graceful stop for its
// timeout. Found by broker/e2e TestGracefulStop: a consumer's parked
// Fetch held SIGTERM past the 4 s shutdown budget.
func TestShutdownAnswersParkedRequests(t *testing.T) {
	p := newProbe()
	parked := api{key: 12, min: 0, max: 4, handle: func(_ *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.HeartbeatRequest)
		p.start(req.MemberID)
		defer p.finish(req.MemberID)
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		select {
		case <-time.After(time.Minute):
		case <-reqctx.Draining(ctx):
			resp.ErrorCode = 15 // COORDINATOR_NOT_AVAILABLE: "answered early"
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return resp, nil
	}}
	s := newServer(Config{Listeners: []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}, EventLoops: 1},
		Services{}, testLogger(), nil, newAPITable(Services{}, parked))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, s.plaintextAddr())
	c.send(5, heartbeat("g", "parked"))
	waitFor(t, 5*time.Second, "the request to park", func() bool { _, ok := p.startedAt("parked"); return ok })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	began := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Fatalf("Shutdown took %v with a parked request", d)
	}
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.Version = 4
	if corr := c.readResp(resp); corr != 5 || resp.ErrorCode != 15 {
		t.Fatalf("parked request answered corr %d error %d, want corr 5 error 15", corr, resp.ErrorCode)
	}
	c.expectClosed(5 * time.Second)
}
