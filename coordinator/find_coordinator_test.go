package coordinator

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

func TestFindCoordinator(t *testing.T) {
	h := newHarness(t)
	ctx := clientCtx("c")
	// v0: no key type; the group's partition leader on this listener.
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = "g"
	r := h.c.FindCoordinator(ctx, req)
	if r.ErrorCode != 0 || r.NodeID != 1 || r.Host != testHost || r.Port != testPort {
		t.Fatalf("v0: %+v", r)
	}
	// The listener the request came in on decides the endpoint.
	internal := reqctx.With(context.Background(), reqctx.Info{Listener: "INTERNAL"})
	if r := h.c.FindCoordinator(internal, req); r.Host != "10.0.0.1" || r.Port != 19092 {
		t.Fatalf("INTERNAL listener: %+v", r)
	}
	// v3 transaction key: INVALID_REQUEST with a message.
	req.Version = 3
	req.CoordinatorType = 1
	r = h.c.FindCoordinator(ctx, req)
	if r.ErrorCode != invalidRequest || r.ErrorMessage == nil || *r.ErrorMessage != errTransactionKey || r.NodeID != -1 || r.Port != -1 {
		t.Fatalf("transaction key: %+v", r)
	}
	// v4 batched, with an unknown key type in a second request.
	req = kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 4
	req.CoordinatorKeys = []string{"a", "b", "polygenelubricants"}
	r = h.c.FindCoordinator(ctx, req)
	if len(r.Coordinators) != 3 {
		t.Fatalf("v4: %+v", r)
	}
	for _, c := range r.Coordinators {
		if c.ErrorCode != 0 || c.NodeID != 1 || c.Host != testHost || c.Port != testPort {
			t.Fatalf("v4 coordinator: %+v", c)
		}
	}
	if r.Coordinators[2].Key != "polygenelubricants" {
		t.Fatalf("keys out of order: %+v", r.Coordinators)
	}
	req.CoordinatorType = 2
	r = h.c.FindCoordinator(ctx, req)
	if r.Coordinators[0].ErrorCode != invalidRequest {
		t.Fatalf("share key: %+v", r.Coordinators[0])
	}

	// No leader for the group's partition: COORDINATOR_NOT_AVAILABLE.
	img := testImage(-1)
	h.img.Store(img)
	req = kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 2
	req.CoordinatorKey = "g"
	if r := h.c.FindCoordinator(ctx, req); r.ErrorCode != coordinatorNotAvailable || r.NodeID != -1 {
		t.Fatalf("leaderless: %+v", r)
	}
	// A fenced broker is not an endpoint.
	img = testImage(1)
	img.Brokers[1].Fenced = true
	h.img.Store(img)
	if r := h.c.FindCoordinator(ctx, req); r.ErrorCode != coordinatorNotAvailable {
		t.Fatalf("fenced leader: %+v", r)
	}
}

func TestFindCoordinatorCreatesOffsetsTopic(t *testing.T) {
	var ensured int
	var h *harness
	h = newHarness(t, func(c *Config) {
		c.EnsureOffsetsTopic = func(context.Context) error {
			ensured++
			h.img.Store(testImage(1))
			return nil
		}
	})
	img := testImage(1)
	delete(img.Topics, OffsetsTopic)
	h.img.Store(img)
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 4
	req.CoordinatorKeys = []string{"a", "b"}
	r := h.c.FindCoordinator(clientCtx("c"), req)
	if ensured != 1 || r.Coordinators[0].ErrorCode != 0 || r.Coordinators[1].ErrorCode != 0 || r.Coordinators[1].NodeID != 1 {
		t.Fatalf("ensured %d times; %+v", ensured, r.Coordinators)
	}
	// Creation failing: COORDINATOR_NOT_AVAILABLE, retried by clients.
	h.c.cfg.EnsureOffsetsTopic = func(context.Context) error { ensured++; return errors.New("no quorum") }
	img = testImage(1)
	delete(img.Topics, OffsetsTopic)
	h.img.Store(img)
	r = h.c.FindCoordinator(clientCtx("c"), req)
	if ensured != 2 || r.Coordinators[0].ErrorCode != coordinatorNotAvailable || r.Coordinators[0].NodeID != -1 {
		t.Fatalf("failed creation: %+v", r.Coordinators)
	}
}

func TestDefaultEndpoint(t *testing.T) {
	img := testImage(1)
	if _, _, ok := DefaultEndpoint(img, 2, "PLAINTEXT"); ok {
		t.Fatal("unknown broker resolved")
	}
	if _, _, ok := DefaultEndpoint(img, 1, "SSL"); ok {
		t.Fatal("unknown listener resolved")
	}
	if h, p, ok := DefaultEndpoint(img, 1, ""); !ok || h != testHost || p != testPort {
		t.Fatalf("no listener: %s %d %v", h, p, ok)
	}
	if _, _, ok := DefaultEndpoint(nil, 1, ""); ok {
		t.Fatal("nil image resolved")
	}
}
