package wire

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

func reqctxListener(ctx context.Context) string { return reqctx.From(ctx).Listener }

// Handlers see who sent the request, and their context ends with the
// connection.
func TestHandlerContext(t *testing.T) {
	infos := make(chan reqctx.Info, 1)
	ended := make(chan struct{})
	standIn := api{key: 12, min: 0, max: 4, handle: func(_ *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
		infos <- reqctx.From(ctx)
		if kreq.(*kmsg.HeartbeatRequest).Group == "park" {
			<-ctx.Done()
			close(ended)
			return nil, ctx.Err()
		}
		return kreq.ResponseKind(), nil
	}}
	s := newTestServer(t, Config{}, nil, standIn)
	c := dialRaw(t, s.plaintextAddr())
	req := heartbeat("", "")
	req.Version = 3
	c.write(encodeRequest(9, "my-client", req))
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.Version = 3
	c.readResp(resp)
	info := <-infos
	want := reqctx.Info{ConnID: info.ConnID, ClientID: "my-client", ClientHost: "127.0.0.1", Listener: "PLAINTEXT",
		Principal: "User:ANONYMOUS", APIKey: 12, APIVersion: 3}
	if info != want || info.ConnID == 0 {
		t.Fatalf("reqctx.Info %+v, want %+v", info, want)
	}

	c.send(10, heartbeat("park", ""))
	<-infos
	c.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("a parked handler's context was not canceled when its connection closed")
	}
}

type countingMetrics struct {
	mu                sync.Mutex
	opened, closed    int
	bytesIn, bytesOut int
	done              []string
}

func (m *countingMetrics) RequestDone(key, version int16, dur time.Duration, err bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done = append(m.done, kmsg.NameForKey(key)+map[bool]string{true: " err", false: " ok"}[err])
	_ = version
	_ = dur
}
func (m *countingMetrics) BytesIn(n int)  { m.mu.Lock(); m.bytesIn += n; m.mu.Unlock() }
func (m *countingMetrics) BytesOut(n int) { m.mu.Lock(); m.bytesOut += n; m.mu.Unlock() }
func (m *countingMetrics) ConnOpened()    { m.mu.Lock(); m.opened++; m.mu.Unlock() }
func (m *countingMetrics) ConnClosed()    { m.mu.Lock(); m.closed++; m.mu.Unlock() }

func (m *countingMetrics) snapshot() countingMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	return countingMetrics{opened: m.opened, closed: m.closed, bytesIn: m.bytesIn, bytesOut: m.bytesOut, done: append([]string(nil), m.done...)}
}

func TestMetrics(t *testing.T) {
	m := &countingMetrics{}
	s := newTestServer(t, Config{}, m, heartbeatStandIn(newProbe()))
	c := dialRaw(t, s.plaintextAddr())
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	frame := encodeRequest(1, "m", req)
	c.write(frame)
	resp := c.readFrame(5 * time.Second)
	c.send(2, heartbeat("fail", ""))
	c.expectClosed(5 * time.Second)
	waitFor(t, 5*time.Second, "the close to be counted", func() bool { return m.snapshot().closed == 1 })
	got := m.snapshot()
	hb := encodeRequest(2, "raw", heartbeat("fail", ""))
	if got.opened != 1 || got.bytesIn != len(frame)+len(hb) || got.bytesOut != len(resp)+4 {
		t.Fatalf("opened %d closed %d in %d out %d; want 1 1 %d %d", got.opened, got.closed, got.bytesIn, got.bytesOut, len(frame)+len(hb), len(resp)+4)
	}
	if len(got.done) != 2 || got.done[0] != "ApiVersions ok" || got.done[1] != "Heartbeat err" {
		t.Fatalf("requests done %v", got.done)
	}
}
