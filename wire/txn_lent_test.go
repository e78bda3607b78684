package wire

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnStandIns answer AddPartitionsToTxn and EndTxn at once, the throttle
// time the transactional id's length, so each answer can be told from the
// others.
func txnStandIns() []api {
	return []api{
		{key: 24, min: 0, max: 5, handle: func(_ *Server, _ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
			req := kreq.(*kmsg.AddPartitionsToTxnRequest)
			resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
			resp.ThrottleMillis = int32(len(req.TransactionalID))
			return resp, nil
		}},
		{key: 26, min: 0, max: 4, handle: func(_ *Server, _ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
			req := kreq.(*kmsg.EndTxnRequest)
			resp := req.ResponseKind().(*kmsg.EndTxnResponse)
			resp.ThrottleMillis = int32(len(req.TransactionalID))
			return resp, nil
		}},
	}
}

// A transactional producer's coordinator connection (AddPartitionsToTxn
// and EndTxn every transaction, nothing produced on it) has its answers
// written on the lent socket from its first such answer, as a producing
// connection from its first Produce answer: one grant for the
// connection's life, every later answer (an ApiVersions too) in order and
// intact on it. Before, each of these answers was handed to gnet: a task,
// an eventfd wake-up of the loop and a writev there.
func TestTxnCoordinatorAnswersUseTheLentSocket(t *testing.T) {
	requireSendfile(t)
	s := newTestServer(t, Config{}, nil, txnStandIns()...)
	c := dialRaw(t, s.plaintextAddr())

	// Nothing transactional yet: answers through gnet, nothing lent.
	c.send(1, kmsg.NewPtrApiVersionsRequest())
	if corr := c.readResp(kmsg.NewPtrApiVersionsResponse()); corr != 1 {
		t.Fatalf("ApiVersions answered with correlation id %d", corr)
	}
	if n := s.socketsLent.Load(); n != 0 {
		t.Fatalf("the socket was lent %d times before any transactional answer", n)
	}

	corr := int32(1)
	for round := range 5 {
		id := string(make([]byte, round+1))
		add := kmsg.NewPtrAddPartitionsToTxnRequest()
		add.Version, add.TransactionalID = 3, id
		end := kmsg.NewPtrEndTxnRequest()
		end.Version, end.TransactionalID, end.Commit = 3, id, true
		// Pipelined: the two answers and an ApiVersions in one write.
		batch := encodeRequest(corr+1, "c", add)
		batch = append(batch, encodeRequest(corr+2, "c", end)...)
		batch = append(batch, encodeRequest(corr+3, "c", kmsg.NewPtrApiVersionsRequest())...)
		c.write(batch)
		addResp := kmsg.NewPtrAddPartitionsToTxnResponse()
		addResp.Version = 3
		if got := c.readResp(addResp); got != corr+1 || addResp.ThrottleMillis != int32(round+1) {
			t.Fatalf("round %d: AddPartitionsToTxn answer corr %d throttle %d", round, got, addResp.ThrottleMillis)
		}
		endResp := kmsg.NewPtrEndTxnResponse()
		endResp.Version = 3
		if got := c.readResp(endResp); got != corr+2 || endResp.ThrottleMillis != int32(round+1) {
			t.Fatalf("round %d: EndTxn answer corr %d throttle %d", round, got, endResp.ThrottleMillis)
		}
		if got := c.readResp(kmsg.NewPtrApiVersionsResponse()); got != corr+3 {
			t.Fatalf("round %d: ApiVersions answer corr %d", round, got)
		}
		corr += 3
	}
	if n := s.socketsLent.Load(); n != 1 {
		t.Fatalf("the loop lent the socket %d times, want once, at the first transactional answer", n)
	}
	c.Close()
	settled(t, s)
}
