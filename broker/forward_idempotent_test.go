package broker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestForwardedDeleteMirrorAnswerLost deletes a mirror through a broker
// that is not the active controller and loses the controller's answer on
// the way back (the link from the controller is slowed, then cut once the
// mirror is gone from the controller's image): the broker retries, and
// the client gets the first answer, success, not UNKNOWN_CLUSTER_MIRROR.
func TestForwardedDeleteMirrorAnswerLost(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	src := brokertest.Start(t)
	c := brokertest.StartCluster(t, 3)
	cl := rawClient(ctx, t, c, mirrorOpt)
	ctrl := c.Controller()
	via := 1 + ctrl%3
	createMirrorVia(ctx, t, cl, via, "m", src.Addr())
	c.WaitFor(t, 10*time.Second, fmt.Sprintf("m on node %d", via), func() bool {
		_, ok := c.Node(via).Node().Image().Mirrors["m"]
		return ok
	})

	c.Net.SetLinkDelay(ctrl, via, time.Second)
	del := mirrormsg.NewPtrDeleteMirrorRequest()
	del.MirrorName = "m"
	answer := make(chan *mirrormsg.DeleteMirrorResponse, 1)
	go func() {
		resp, err := cl.Broker(int(via)).Request(ctx, del)
		if err != nil {
			t.Errorf("DeleteMirror via %d: %v", via, err)
			answer <- nil
			return
		}
		answer <- resp.(*mirrormsg.DeleteMirrorResponse)
	}()
	c.WaitFor(t, 10*time.Second, "m deleted on the controller", func() bool {
		_, ok := c.Node(ctrl).Node().Image().Mirrors["m"]
		return !ok
	})
	// The answer is on its way, held back by the delay: cut it off.
	c.Net.Partition([]int32{ctrl}, []int32{via})
	time.Sleep(200 * time.Millisecond)
	c.Net.SetLinkDelay(ctrl, via, 0)
	c.Net.Heal()
	resp := <-answer
	if resp == nil {
		t.FailNow()
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("DeleteMirror via %d whose first answer was lost: %s %s", via, errName(resp.ErrorCode), deref(resp.ErrorMessage))
	}
}
