// Package admintest is a minimal Kafka-protocol broker for testing mirror
// admin clients without a cluster: it answers ApiVersions (kmsg's stable
// table plus the mirror RPCs), Metadata (itself as the only broker and the
// controller) and the mirror RPCs, which a test scripts with Handle. It
// follows the fake of raftmeta/mirrormsg's kgo test and, like franz-go's kfake
// ControlKey, lets a test observe and answer each request key.
package admintest

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// HandlerFunc answers one mirror request. A nil response closes the
// connection without answering, as a broker that fails mid-request does.
// ctx ends when the broker closes, so a handler that blocks (to test
// client timeouts) must select on it.
type HandlerFunc func(ctx context.Context, req kmsg.Request) kmsg.Response

// Option configures a Broker.
type Option func(*Broker)

// WithoutMirrorAPIs makes the broker advertise no mirror key in
// ApiVersions, like a Kafka without KIP-1279.
func WithoutMirrorAPIs() Option {
	return func(b *Broker) { b.noMirror = true }
}

// Broker is a one-node Kafka-protocol server, node 1 and controller.
type Broker struct {
	t        testing.TB
	ln       net.Listener
	host     string
	port     int32
	noMirror bool
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	handlers map[int16]HandlerFunc
	received []kmsg.Request // mirror requests, in arrival order
	closed   bool
}

// NewBroker starts a broker on a loopback port; it closes when the test
// ends.
func NewBroker(t testing.TB, opts ...Option) *Broker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	ctx, cancel := context.WithCancel(context.Background())
	b := &Broker{
		t: t, ln: ln, host: host, port: int32(p), ctx: ctx, cancel: cancel,
		conns: make(map[net.Conn]struct{}), handlers: make(map[int16]HandlerFunc),
	}
	for _, o := range opts {
		o(b)
	}
	b.wg.Add(1)
	go b.accept()
	t.Cleanup(b.Close)
	return b
}

// Addr is the broker's host:port.
func (b *Broker) Addr() string { return b.ln.Addr().String() }

// Handle scripts the answer to the mirror key (mirrormsg.Key*). A mirror
// request with no handler fails the test and closes its connection.
func (b *Broker) Handle(key int16, h HandlerFunc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.handlers[key] = h
}

// Received returns the mirror requests received so far, in order.
func (b *Broker) Received() []kmsg.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]kmsg.Request(nil), b.received...)
}

// Close stops the broker and waits for its goroutines.
func (b *Broker) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.ln.Close()
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
}

func (b *Broker) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			c.Close()
			return
		}
		b.conns[c] = struct{}{}
		b.mu.Unlock()
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer func() {
				c.Close()
				b.mu.Lock()
				delete(b.conns, c)
				b.mu.Unlock()
			}()
			if err := b.serve(c); err != nil && !clientHungUp(err) && b.ctx.Err() == nil {
				b.t.Errorf("admintest broker: %v", err)
			}
		}()
	}
}

// clientHungUp says whether err is the client ending its connection, which
// a client may do at any time: it closed it (EOF), or it closed it with a
// request still unanswered, which the kernel turns into a reset (the CLI
// may give up at its --barrier-timeout with a DescribeMirrors in flight).
func clientHungUp(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// errHangUp ends a connection on purpose (a handler answered nil).
var errHangUp = errors.New("hang up")

func (b *Broker) serve(c net.Conn) error {
	r := bufio.NewReader(c)
	for {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return err
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(r, frame); err != nil {
			return err
		}
		rd := kbin.Reader{Src: frame}
		key, version, corr := rd.Int16(), rd.Int16(), rd.Int32()
		rd.NullableString() // client id
		// Mirror keys first, as Strait's server looks them up.
		req := mirrormsg.RequestForKey(key)
		if req == nil {
			req = kmsg.RequestForKey(key)
		}
		if req == nil {
			return fmt.Errorf("unknown key %d", key)
		}
		req.SetVersion(version)
		if req.IsFlexible() {
			kmsg.SkipTags(&rd)
		}
		if err := req.ReadFrom(rd.Src); err != nil {
			return fmt.Errorf("key %d v%d: %w", key, version, err)
		}
		resp, err := b.handle(req)
		if errors.Is(err, errHangUp) {
			return nil
		}
		if err != nil {
			return err
		}
		out := kbin.AppendInt32(make([]byte, 4), corr)
		// Flexible responses have header v1, but ApiVersions always
		// answers with header v0 (KIP-511).
		if req.IsFlexible() && key != int16(kmsg.ApiVersions) {
			out = append(out, 0)
		}
		out = resp.AppendTo(out)
		binary.BigEndian.PutUint32(out, uint32(len(out)-4))
		if _, err := c.Write(out); err != nil {
			return err
		}
	}
}

func (b *Broker) handle(req kmsg.Request) (kmsg.Response, error) {
	switch req := req.(type) {
	case *kmsg.ApiVersionsRequest:
		return b.apiVersions(req), nil
	case *kmsg.MetadataRequest:
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID, br.Host, br.Port = 1, b.host, b.port
		resp.Brokers = append(resp.Brokers, br)
		resp.ControllerID = 1
		resp.ClusterID = kmsg.StringPtr("admintest")
		return resp, nil
	}
	if mirrormsg.NameForKey(req.Key()) == "" {
		return nil, fmt.Errorf("unexpected request key %d (%T)", req.Key(), req)
	}
	b.mu.Lock()
	b.received = append(b.received, req)
	h := b.handlers[req.Key()]
	b.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("no handler for %s (key %d)", mirrormsg.NameForKey(req.Key()), req.Key())
	}
	resp := h(b.ctx, req)
	if resp == nil {
		return nil, errHangUp
	}
	return resp, nil
}

// apiVersions advertises kversion.Stable() with the mirror keys (or, with
// WithoutMirrorAPIs, without them).
func (b *Broker) apiVersions(req *kmsg.ApiVersionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	vs := kversion.Stable()
	if b.noMirror {
		for _, a := range mirrormsg.APIs {
			vs.SetMaxKeyVersion(a.Key, -1)
		}
	} else {
		vs = mirrormsg.MaxVersions(vs)
	}
	vs.EachMaxKeyVersion(func(k, v int16) {
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey, ak.MinVersion, ak.MaxVersion = k, 0, v
		resp.ApiKeys = append(resp.ApiKeys, ak)
	})
	return resp
}
