package wire

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// appendingReplicas stands in for the replica manager's Produce: it copies
// each partition's records, as a log append does, and notes where the
// records it was handed lie, to see frames reused.
type appendingReplicas struct {
	ReplicaService // nil: only Produce is called

	mu      sync.Mutex
	log     [][]byte
	seenAt  map[uintptr]int // records' address → how many requests had it
	release chan struct{}   // nil: answer at once; else wait for a receive
}

func (r *appendingReplicas) Produce(ctx context.Context, req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	r.mu.Lock()
	release := r.release
	r.mu.Unlock()
	if release != nil {
		<-release
	}
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = t.Topic
		for _, p := range t.Partitions {
			r.log = append(r.log, bytes.Clone(p.Records))
			r.seenAt[uintptr(unsafe.Pointer(unsafe.SliceData(p.Records)))]++
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = p.Partition
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func produceOf(i int, size int) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = bytes.Repeat([]byte{byte(i)}, size)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// Produce frames come from the server's buffer pool and go back when
// their request ends (api.poolFrame): one request after another reuses the
// same buffer, every record reaches the handler intact even though
// released buffers are scribbled on, and nothing stays handed out. A
// request still in its handler keeps its frame: a second one on another
// connection meanwhile gets a buffer of its own.
func TestProduceFramesPooled(t *testing.T) {
	r := &appendingReplicas{seenAt: map[uintptr]int{}}
	s := newTestServerSvc(t, Config{}, Services{Replicas: r}, nil)
	c := dialRaw(t, s.plaintextAddr())
	const n, size = 20, 40 << 10
	for i := range n {
		c.send(int32(i), produceOf(i, size))
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		if corr := c.readResp(resp); corr != int32(i) {
			t.Fatalf("answer %d to request %d", corr, i)
		}
	}
	r.mu.Lock()
	for i, got := range r.log {
		if !bytes.Equal(got, bytes.Repeat([]byte{byte(i)}, size)) {
			t.Fatalf("request %d's records reached the handler corrupted", i)
		}
	}
	reused := 0
	for _, k := range r.seenAt {
		reused = max(reused, k)
	}
	r.mu.Unlock()
	if reused < n/2 {
		t.Fatalf("the busiest buffer carried %d of %d sequential requests; frames are not reused", reused, n)
	}

	// Two requests in their handlers at once hold two buffers.
	r.mu.Lock()
	r.seenAt, r.log, r.release = map[uintptr]int{}, nil, make(chan struct{})
	r.mu.Unlock()
	c2 := dialRaw(t, s.plaintextAddr())
	c.send(100, produceOf(1, size))
	c2.send(101, produceOf(2, size))
	deadline := time.Now().Add(5 * time.Second)
	for s.bufs.outstanding() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	r.mu.Lock()
	release := r.release
	r.mu.Unlock()
	release <- struct{}{}
	release <- struct{}{}
	for _, cl := range []*rawClient{c, c2} {
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		cl.readResp(resp)
	}
	r.mu.Lock()
	if len(r.seenAt) != 2 {
		t.Fatalf("two concurrent requests shared %d buffer(s)", len(r.seenAt))
	}
	for _, got := range r.log {
		if len(got) != size || (got[0] != 1 && got[0] != 2) || !bytes.Equal(got, bytes.Repeat(got[:1], size)) {
			t.Fatal("concurrent requests' records reached the handler corrupted")
		}
	}
	r.mu.Unlock()
	settledPool(t, s)
}

// settledPool waits until every buffer handed out has come back.
func settledPool(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.bufs.outstanding() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d buffers still handed out", s.bufs.outstanding())
		}
		time.Sleep(time.Millisecond)
	}
}
