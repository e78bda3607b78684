package ctrlrpc

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strait-io/strait/broker/brokertest/faultnet"
)

func newDialOnlyLayer(t *testing.T) *StreamLayer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewStreamLayer(l, nil, nil, nil, nil)
	t.Cleanup(func() { s.Close() })
	return s
}

type dialResult struct {
	c   net.Conn
	err error
	at  time.Time
}

func dialAsync(s *StreamLayer, addr string, timeout time.Duration) <-chan dialResult {
	ch := make(chan dialResult, 1)
	go func() {
		c, err := s.Dial(raft.ServerAddress(addr), timeout)
		ch <- dialResult{c, err, time.Now()}
	}()
	return ch
}

// A voter whose process is down refuses raft's dial. The dial waits and
// connects as soon as the voter listens again, instead of failing at once
// and adding to hashicorp/raft's replication backoff.
func TestDialWaitsForRefusingNode(t *testing.T) {
	s := newDialOnlyLayer(t)
	addr := faultnet.RefusedAddr(t)
	res := dialAsync(s, addr, 10*time.Second)

	select {
	case r := <-res:
		t.Fatalf("dial to a refusing node returned before it listened: %v", r.err)
	case <-time.After(4 * dialRetryInterval):
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the released port was taken meanwhile: %v", err)
	}
	defer l.Close()
	listening := time.Now()
	r := <-res
	if r.err != nil {
		t.Fatalf("dial after the node listened: %v", r.err)
	}
	r.c.Close()
	if wait := r.at.Sub(listening); wait > 2*time.Second {
		t.Fatalf("dial connected %v after the node listened, want about %v", wait, dialRetryInterval)
	}
}

// A node that stays down fails the dial once its timeout passes, with
// the refusal as the error.
func TestDialRefusedUntilTimeout(t *testing.T) {
	s := newDialOnlyLayer(t)
	began := time.Now()
	r := <-dialAsync(s, faultnet.RefusedAddr(t), 500*time.Millisecond)
	if r.err == nil {
		r.c.Close()
		t.Fatal("dial to a closed port succeeded")
	}
	if !errors.Is(r.err, syscall.ECONNREFUSED) {
		t.Fatalf("dial error %v, want the refusal", r.err)
	}
	if took := r.at.Sub(began); took < 400*time.Millisecond || took > 5*time.Second {
		t.Fatalf("dial gave up after %v, want about the 500ms timeout", took)
	}
}

// Closing the stream layer (raft's transport closes it on shutdown) ends
// a dial that waits for a refusing node, so shutdown does not wait out
// the transport's timeout.
func TestDialEndsOnClose(t *testing.T) {
	s := newDialOnlyLayer(t)
	res := dialAsync(s, faultnet.RefusedAddr(t), time.Minute)
	time.Sleep(3 * dialRetryInterval)
	closed := time.Now()
	s.Close()
	select {
	case r := <-res:
		if r.err == nil {
			r.c.Close()
			t.Fatal("dial succeeded after Close")
		}
		if took := r.at.Sub(closed); took > 2*time.Second {
			t.Fatalf("dial ended %v after Close", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("dial still waiting 10s after Close")
	}
}
