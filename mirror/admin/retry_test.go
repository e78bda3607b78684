package admin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/admin/admintest"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestNotControllerIsRetried: a broker that cannot reach the controller
// (an election) answers NOT_CONTROLLER; the client asks again until the
// answer is another one, and gives up with it when its context ends.
func TestNotControllerIsRetried(t *testing.T) {
	b := admintest.NewBroker(t)
	calls := 0
	b.Handle(mirrormsg.KeyStopMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		calls++
		resp := req.ResponseKind().(*mirrormsg.StopMirrorTopicsResponse)
		if calls <= 2 {
			resp.ErrorCode = kerr.NotController.Code
		}
		return resp
	})
	c := newClient(t, b)
	if _, err := c.StopMirrorTopics(testCtx(t), "m1", "orders"); err != nil {
		t.Fatalf("StopMirrorTopics after two NOT_CONTROLLER answers: %v", err)
	}
	if n := len(b.Received()); n != 3 {
		t.Fatalf("broker received %d requests, want 3 (two NOT_CONTROLLER, one answer)", n)
	}

	b.Handle(mirrormsg.KeyDeleteMirror, func(_ context.Context, req kmsg.Request) kmsg.Response {
		resp := req.ResponseKind().(*mirrormsg.DeleteMirrorResponse)
		resp.ErrorCode = kerr.NotController.Code
		return resp
	})
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.DeleteMirror(ctx, "m1")
	if !errors.Is(err, kerr.NotController) {
		t.Fatalf("DeleteMirror while no controller answers: %v, want NOT_CONTROLLER", err)
	}
	if d := time.Since(start); d < 600*time.Millisecond || d > 5*time.Second {
		t.Fatalf("DeleteMirror gave up after %v, want about its 700ms context", d)
	}
}
