package wire

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceStandIn answers Produce (key 0) by what the transactional id
// says, as heartbeatStandIn does by the group: "sleep:<duration>[:unmute]"
// or nil for an immediate answer.
func produceStandIn() api {
	return api{key: 0, min: 3, max: 12, handle: func(_ *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		req := kreq.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		if req.TransactionID == nil {
			return resp, nil
		}
		if err := standInSleep(ctx, strings.Split(*req.TransactionID, ":")); err != nil {
			return nil, err
		}
		return resp, nil
	}}
}

func produceRequest(instruction string) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = 1
	req.TimeoutMillis = 30000
	if instruction != "" {
		req.TransactionID = &instruction
	}
	return req
}

func readProduce(t *testing.T, c *rawClient) int32 {
	t.Helper()
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 9
	return c.readResp(resp)
}

// Produce answers that pipelined requests complete one after another on
// the connection's runner leave in one write (conn.holdForNext): 31
// answers queued behind a slow append go out in a handful of writes, in
// order, not 31.
func TestPipelinedProduceAnswersShareAWrite(t *testing.T) {
	s := newTestServer(t, Config{MaxInflightRequests: 64}, nil, produceStandIn())
	c := dialRaw(t, s.plaintextAddr())
	const n = 31
	batch := encodeRequest(0, "c", produceRequest("sleep:300ms"))
	for i := 1; i < n; i++ {
		batch = append(batch, encodeRequest(int32(i), "c", produceRequest(""))...)
	}
	before := s.responseWrites.Load()
	c.write(batch)
	for i := range n {
		if corr := readProduce(t, c); corr != int32(i) {
			t.Fatalf("answer %d has correlation id %d", i, corr)
		}
	}
	if got := s.responseWrites.Load() - before; got > 5 {
		t.Fatalf("%d pipelined produce answers took %d writes, want them written together", n, got)
	}
}

// An answer held for the next produce is written as soon as that produce
// waits instead (an acks=all append waiting for the ISR unmutes): it does
// not wait out the next one's wait.
func TestHeldProduceAnswerLeavesBeforeTheNextWaits(t *testing.T) {
	s := newTestServer(t, Config{MaxInflightRequests: 64}, nil, produceStandIn())
	c := dialRaw(t, s.plaintextAddr())
	batch := encodeRequest(1, "c", produceRequest("sleep:200ms"))
	batch = append(batch, encodeRequest(2, "c", produceRequest(""))...)
	batch = append(batch, encodeRequest(3, "c", produceRequest("sleep:3s:unmute"))...)
	c.write(batch)
	start := time.Now()
	for _, want := range []int32{1, 2} {
		if corr := readProduce(t, c); corr != want {
			t.Fatalf("correlation id %d, want %d", corr, want)
		}
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("the answers before a waiting produce took %v, held through its wait", el)
	}
	if corr := readProduce(t, c); corr != 3 {
		t.Fatalf("correlation id %d, want 3", corr)
	}
}
