package wire

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Each bad input closes its own connection; the server keeps answering a
// well-behaved client on another connection.
func TestBadInputClosesConnection(t *testing.T) {
	s := newTestServer(t, Config{SocketRequestMaxBytes: 1 << 20}, nil, heartbeatStandIn(newProbe()))
	addr := s.plaintextAddr()
	bystander := dialRaw(t, addr)

	frame := func(body ...byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	}
	for _, tc := range []struct {
		name  string
		bytes []byte
	}{
		{"2GiB-1 size prefix", []byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3}},
		{"2GiB size prefix, negative as int32", []byte{0x80, 0, 0, 0}},
		{"size -1", []byte{0xff, 0xff, 0xff, 0xff}},
		{"just over socket.request.max.bytes", binary.BigEndian.AppendUint32(nil, 1<<20+1)},
		{"garbage: an HTTP request", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
		{"empty frame", frame()},
		{"header shorter than key+version+correlation", frame(0, 18, 0, 3, 0, 0, 0)},
		{"client id longer than the frame", frame(0, 18, 0, 1, 0, 0, 0, 1, 0, 50, 'a')},
		{"flexible header without its tag section", frame(0, 18, 0, 3, 0, 0, 0, 1, 0, 0)},
		{"unknown api key", frame(0x03, 0xe7, 0, 0, 0, 0, 0, 1, 0xff, 0xff)},
		{"kmsg key this broker does not serve (DescribeCluster)", frame(0, 60, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 0)},
		{"Heartbeat above its registered range", frame(0, 12, 0, 5, 0, 0, 0, 1, 0xff, 0xff, 0)},
		{"ApiVersions v3 with a truncated body", frame(0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0, 9, 'a')},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.write(tc.bytes)
			c.expectClosed(5 * time.Second)
			apiVersionsOnConn(t, bystander)
			apiVersionsOK(t, addr)
		})
	}
}

// A frame cut short by the client closing must not disturb anyone.
func TestTruncatedFrameThenClose(t *testing.T) {
	s := newTestServer(t, Config{}, nil)
	addr := s.plaintextAddr()
	for _, cut := range [][]byte{
		{0, 0},                         // half a size prefix
		{0, 0, 0, 100, 0, 18, 0, 3},    // a size, then part of the header
		{0, 0, 0x10, 0, 1, 2, 3, 4, 5}, // a 1 MiB frame, nine bytes of it
	} {
		c := dialRaw(t, addr)
		c.write(cut)
		c.Close()
	}
	apiVersionsOK(t, addr)
	waitFor(t, 5*time.Second, "the truncated connections to be closed", func() bool {
		n := 0
		for _, l := range s.listeners {
			n += len(l.snapshot())
		}
		return n == 0
	})
}

// Requests read before a bad one are answered before the connection
// closes; nothing after it is run.
func TestBadRequestAfterGoodOnes(t *testing.T) {
	p := newProbe()
	s := newTestServer(t, Config{MaxInflightRequests: 8}, nil, heartbeatStandIn(p))
	c := dialRaw(t, s.plaintextAddr())
	var batch []byte
	batch = append(batch, encodeRequest(1, "c", heartbeat("sleep:50ms", "first"))...)
	batch = append(batch, encodeRequest(2, "c", heartbeat("", "second"))...)
	batch = append(batch, 0, 0, 0, 10, 0x03, 0xe7, 0, 0, 0, 0, 0, 3, 0xff, 0xff) // unknown key 999
	batch = append(batch, encodeRequest(4, "c", heartbeat("", "after"))...)
	c.write(batch)
	for _, want := range []int32{1, 2} {
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.Version = 4
		if corr := c.readResp(resp); corr != want {
			t.Fatalf("correlation id %d, want %d", corr, want)
		}
	}
	c.expectClosed(5 * time.Second)
	if _, ran := p.startedAt("after"); ran {
		t.Fatal("the request after the bad one was handled")
	}
}
