package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/wire/tlstest"
)

// readerReplicas stands in for the replica manager's Produce on a
// connection its runner reads (reader.go): it keeps each request's records
// in the order it handles them, may Unmute as an acks=all produce waiting
// for the ISR does, and may hold every request until the test lets it go.
type readerReplicas struct {
	ReplicaService // nil: only Produce is called

	unmute  bool
	entered atomic.Int32

	mu   sync.Mutex
	seen [][]byte
	gate chan struct{} // nil: answer at once; else each request waits for a receive
}

func (r *readerReplicas) Produce(ctx context.Context, req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	r.mu.Lock()
	for _, t := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = t.Topic
		for _, p := range t.Partitions {
			r.seen = append(r.seen, bytes.Clone(p.Records))
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = p.Partition
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	gate := r.gate
	r.mu.Unlock()
	r.entered.Add(1)
	if r.unmute {
		Unmute(ctx)
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	return resp
}

// holdEach makes every later request wait for a receive on the gate it
// returns, with how many requests had entered before.
func (r *readerReplicas) holdEach() (chan struct{}, int32) {
	g := make(chan struct{})
	r.mu.Lock()
	r.gate = g
	r.mu.Unlock()
	return g, r.entered.Load()
}

func (r *readerReplicas) records() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.seen...)
}

// readerTransport is how a reader test reaches its server: plaintext, an
// SSL listener, whose runner reads its relay's socketpair, or a
// SASL_PLAINTEXT listener, logged in as alice.
type readerTransport struct {
	name  string
	serve func(t *testing.T, cfg Config, svc Services) *Server
	dial  func(t *testing.T, s *Server) *rawClient
}

func readerTransports(t *testing.T) []readerTransport {
	ca := tlstest.NewCA(t, "ca")
	return []readerTransport{{
		name:  "plaintext",
		serve: func(t *testing.T, cfg Config, svc Services) *Server { return newTestServerSvc(t, cfg, svc, nil) },
		dial:  func(t *testing.T, s *Server) *rawClient { return dialRaw(t, s.plaintextAddr()) },
	}, {
		name: "ssl",
		serve: func(t *testing.T, cfg Config, svc Services) *Server {
			cfg.Listeners = []Listener{{Name: "SSL", Host: "127.0.0.1", SecurityProtocol: SecurityProtocolSSL,
				TLS: tlstest.ServerConfig(ca.Issue(t, "broker"), nil)}}
			return newTestServerSvc(t, cfg, svc, nil)
		},
		dial: func(t *testing.T, s *Server) *rawClient {
			cfg := tlstest.ClientConfig(ca, nil)
			cfg.ServerName = "127.0.0.1"
			return dialTLS(t, s.Addrs()["SSL"], cfg)
		},
	}, {
		name: "sasl_plaintext",
		serve: func(t *testing.T, cfg Config, svc Services) *Server {
			cfg.Listeners = []Listener{saslListener(0)}
			return newTestServerSvc(t, cfg, svc, nil)
		},
		dial: func(t *testing.T, s *Server) *rawClient {
			c := dialRaw(t, s.Addrs()["SASL"])
			if resp := c.loginPlain(1, "alice", "alice-secret"); resp.ErrorCode != 0 {
				t.Fatalf("login: error %d", resp.ErrorCode)
			}
			return c
		},
	}}
}

// forEachTransport runs test over each readerTransport.
func forEachTransport(t *testing.T, test func(t *testing.T, tr readerTransport)) {
	requireSendfile(t)
	for _, tr := range readerTransports(t) {
		t.Run(tr.name, func(t *testing.T) { test(t, tr) })
	}
}

// handedOver serves r over tr with cfg and dials a client whose
// connection its runner reads (handOver).
func (tr readerTransport) handedOver(t *testing.T, cfg Config, r *readerReplicas) (*Server, *rawClient) {
	t.Helper()
	s := tr.serve(t, cfg, Services{Replicas: r})
	c := tr.dial(t, s)
	handOver(t, s, c)
	return s, c
}

// handOver produces on c until its loop has handed reading to its runner:
// the first answer has the loop lend the socket, the next request read
// after it hands reading over. Two requests; corr 1000 and 1001.
func handOver(t *testing.T, s *Server, c *rawClient) {
	t.Helper()
	before := s.readersHandedOver.Load()
	for corr := int32(1000); corr < 1002; corr++ {
		c.send(corr, produceOf(int(corr), 100))
		if got := readProduce(t, c); got != corr {
			t.Fatalf("answer %d to request %d", got, corr)
		}
	}
	waitFor(t, 5*time.Second, "the loop to hand reading over", func() bool {
		return s.readersHandedOver.Load() == before+1
	})
}

// onlyConn is the server's one open connection.
func onlyConn(t *testing.T, s *Server) *conn {
	t.Helper()
	conns := s.listeners[0].snapshot()
	if len(conns) != 1 {
		t.Fatalf("%d connections open, want 1", len(conns))
	}
	return conns[0]
}

// A producing connection's runner reads its requests once the loop hands
// reading over: pipelined requests of every size (below a read, across
// reads, larger than a read), other requests among them, and a request
// sent in pieces are all answered in order and reach the handler intact;
// the loop hands over once for the connection's life; when the client
// closes, the connection closes and every buffer and byte of request
// memory comes back.
func TestReaderReadsProducingConnection(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr readerTransport) {
		r := &readerReplicas{}
		s, c := tr.handedOver(t, Config{}, r)

		sizes := []int{100, 16 << 10, 70 << 10, 300 << 10, 1}
		var batch []byte
		var want [][]byte
		const n = 40
		for i := range n {
			if i%7 == 3 {
				batch = append(batch, encodeRequest(int32(i), "c", kmsg.NewPtrApiVersionsRequest())...)
				continue
			}
			req := produceOf(i, sizes[i%len(sizes)])
			want = append(want, req.Topics[0].Partitions[0].Records)
			batch = append(batch, encodeRequest(int32(i), "c", req)...)
		}
		go func() { _, _ = c.Write(batch) }() // larger than the socket buffers: answers are read meanwhile
		for i := range n {
			var corr int32
			if i%7 == 3 {
				corr = c.readResp(kmsg.NewPtrApiVersionsResponse())
			} else {
				corr = readProduce(t, c)
			}
			if corr != int32(i) {
				t.Fatalf("answer %d came with correlation id %d", i, corr)
			}
		}

		// One request in three pieces, the size prefix split.
		req := produceOf(200, 90<<10)
		want = append(want, req.Topics[0].Partitions[0].Records)
		frame := encodeRequest(n, "c", req)
		for _, piece := range [][]byte{frame[:2], frame[2:5000], frame[5000:]} {
			c.write(piece)
			time.Sleep(20 * time.Millisecond)
		}
		if corr := readProduce(t, c); corr != n {
			t.Fatalf("the request sent in pieces was answered with correlation id %d", corr)
		}

		got := r.records()[2:] // after handOver's two
		if len(got) != len(want) {
			t.Fatalf("the handler saw %d produce requests, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("produce request %d reached the handler corrupted or out of order", i)
			}
		}
		if h := s.readersHandedOver.Load(); h != 1 {
			t.Fatalf("reading was handed over %d times, want once", h)
		}
		c.Close()
		settled(t, s)
		waitMemoryUsed(t, s, 0)
	})
}

// A frame size over socket.request.max.bytes, or a negative one, closes a
// connection its runner reads, as the loop closes one it reads; the server
// goes on serving others. Over plaintext and SSL, as the tests below.
func TestReaderClosesOnBadFrameSize(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr readerTransport) {
		for _, tc := range []struct {
			name string
			size uint32
		}{{"too large", 2 << 20}, {"negative", 0xfffffff0}} {
			t.Run(tc.name, func(t *testing.T) {
				r := &readerReplicas{}
				s, c := tr.handedOver(t, Config{SocketRequestMaxBytes: 1 << 20}, r)
				// Bytes after the size, as many as the TLS relay holds
				// back before passing a large frame on (tls_relay.go).
				junk := binary.BigEndian.AppendUint32(nil, tc.size)
				junk = append(junk, make([]byte, relayHoldBytes)...)
				go func() { _, _ = c.Write(junk) }() // fails once the server closes
				c.expectClosed(5 * time.Second)
				other := tr.dial(t, s)
				handOver(t, s, other)
				other.Close()
				settled(t, s)
				waitMemoryUsed(t, s, 0)
			})
		}
	})
}

// After a request fails (an API key the server does not know), a
// connection its runner reads answers what came before, then closes;
// nothing sent after the failure is handled.
func TestReaderStopsAfterFailedRequest(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr readerTransport) {
		r := &readerReplicas{}
		s, c := tr.handedOver(t, Config{}, r)

		bad := encodeRequest(11, "c", kmsg.NewPtrApiVersionsRequest())
		binary.BigEndian.PutUint16(bad[4:], 9999) // the key
		batch := encodeRequest(10, "c", produceOf(10, 100))
		batch = append(batch, bad...)
		batch = append(batch, encodeRequest(12, "c", produceOf(12, 100))...)
		c.write(batch)
		if corr := readProduce(t, c); corr != 10 {
			t.Fatalf("answer with correlation id %d, want 10", corr)
		}
		c.expectClosed(5 * time.Second)
		if n := len(r.records()); n != 3 {
			t.Fatalf("the handler saw %d produce requests, want 3: none after the failed one", n)
		}
		settled(t, s)
	})
}

// A client quota's mute holds back the next request of a connection its
// runner reads: it is handled only once the mute ends (KIP-219).
func TestReaderWaitsOutQuotaMute(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr readerTransport) {
		r := &readerReplicas{}
		s, c := tr.handedOver(t, Config{}, r)

		const mute = 400 * time.Millisecond
		began := time.Now()
		onlyConn(t, s).throttle(mute)
		before := r.entered.Load()
		c.send(20, produceOf(20, 100))
		time.Sleep(mute / 2)
		if r.entered.Load() != before {
			t.Fatal("a request was handled while its connection was muted")
		}
		if used, _, _, _, _ := s.reqMem.state(); used != 0 {
			t.Fatalf("a request was read while its connection was muted: %d bytes of request memory held", used)
		}
		if corr := readProduce(t, c); corr != 20 {
			t.Fatalf("answer with correlation id %d, want 20", corr)
		}
		if d := time.Since(began); d < mute-50*time.Millisecond {
			t.Fatalf("answered %v after a mute of %v", d, mute)
		}
		c.Close()
		settled(t, s)
	})
}

// Requests that let the next start early (acks=all waiting for the ISR)
// pass reading on with the runner's role, so the next is read and handled
// meanwhile; past max in-flight requests, nothing more is read until an
// answer goes out.
func TestReaderInflightLimitAndUnmute(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr readerTransport) {
		r := &readerReplicas{unmute: true}
		s, c := tr.handedOver(t, Config{MaxInflightRequests: 2}, r)

		gate, base := r.holdEach()
		var batch []byte
		for i := range 5 {
			batch = append(batch, encodeRequest(int32(30+i), "c", produceOf(30+i, 100))...)
		}
		c.write(batch)
		waitFor(t, 5*time.Second, "two requests to be handled at once", func() bool { return r.entered.Load() == base+2 })
		time.Sleep(200 * time.Millisecond)
		if n := r.entered.Load() - base; n != 2 {
			t.Fatalf("%d requests handled with a limit of 2 in flight", n)
		}
		// The two waiting are let go together (which of them a receive
		// lets go is not known), so both answers go out, in order.
		release := func(n int, first int32) {
			t.Helper()
			for range n {
				gate <- struct{}{}
			}
			for i := range int32(n) {
				if corr := readProduce(t, c); corr != first+i {
					t.Fatalf("answer with correlation id %d, want %d", corr, first+i)
				}
			}
		}
		release(2, 30)
		waitFor(t, 5*time.Second, "the next two once the answers went out", func() bool { return r.entered.Load() == base+4 })
		time.Sleep(100 * time.Millisecond)
		if n := r.entered.Load() - base; n != 4 {
			t.Fatalf("%d requests handled, want 4: two answered, two in flight", n)
		}
		release(2, 32)
		waitFor(t, 5*time.Second, "the last request", func() bool { return r.entered.Load() == base+5 })
		release(1, 34)
		c.Close()
		settled(t, s)
	})
}

// Shutdown stops connections their runners read: one with a request in
// its handler answers it first, then closes; one parked for its next
// request is interrupted, so it does not hold Shutdown back.
func TestReaderShutdown(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr readerTransport) {
		r := &readerReplicas{}
		s, c := tr.handedOver(t, Config{}, r)
		idle := tr.dial(t, s)
		handOver(t, s, idle)

		gate, base := r.holdEach()
		c.send(40, produceOf(40, 100))
		waitFor(t, 5*time.Second, "the request to be handled", func() bool { return r.entered.Load() == base+1 })
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			done <- s.Shutdown(ctx)
		}()
		select {
		case err := <-done:
			t.Fatalf("Shutdown returned (%v) with a request in its handler", err)
		case <-time.After(200 * time.Millisecond):
		}
		gate <- struct{}{}
		if corr := readProduce(t, c); corr != 40 {
			t.Fatalf("answer with correlation id %d, want 40", corr)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("Shutdown did not end once the request was answered: the parked read held it")
		}
		c.expectClosed(5 * time.Second)
		idle.expectClosed(5 * time.Second)
	})
}

// Request memory (queued.max.request.bytes) holds back a large request of
// a connection its runner reads while another holds the memory it needs;
// it is read once that memory comes back.
func TestReaderWaitsForRequestMemory(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr readerTransport) {
		const capacity = 1 << 20
		r := &readerReplicas{}
		s := tr.serve(t, Config{QueuedMaxRequestBytes: capacity}, Services{Replicas: r})
		a := tr.dial(t, s)
		handOver(t, s, a)
		b := tr.dial(t, s)
		handOver(t, s, b)

		gate, base := r.holdEach()
		a.send(50, produceOf(50, 900<<10))
		waitFor(t, 5*time.Second, "A to be handled", func() bool { return r.entered.Load() == base+1 })
		go func() { _, _ = b.Write(encodeRequest(51, "c", produceOf(51, 600<<10))) }()
		waitFor(t, 5*time.Second, "B to wait for memory", func() bool {
			_, _, _, waiters, _ := s.reqMem.state()
			return waiters == 1
		})
		time.Sleep(100 * time.Millisecond)
		if r.entered.Load() != base+1 {
			t.Fatal("B was read while A held the memory it needs")
		}
		gate <- struct{}{}
		if corr := readProduce(t, a); corr != 50 {
			t.Fatalf("A answered with correlation id %d", corr)
		}
		waitFor(t, 5*time.Second, "B to be handled", func() bool { return r.entered.Load() == base+2 })
		gate <- struct{}{}
		if corr := readProduce(t, b); corr != 51 {
			t.Fatalf("B answered with correlation id %d", corr)
		}
		a.Close()
		b.Close()
		settled(t, s)
		waitMemoryUsed(t, s, 0)
	})
}

// A connection its runner reads re-authenticates (KIP-368): a request
// pipelined behind the re-authentication is read, and sized against
// sasl.server.max.receive.size, only once the re-authentication is
// done, as the loop would read it; larger than that size, it would
// otherwise have closed the connection.
func TestReaderReauthenticates(t *testing.T) {
	requireSendfile(t)
	r := &readerReplicas{}
	l := saslListener(1500 * time.Millisecond)
	l.SASL.MaxReceiveSize = 64 << 10
	m := &authCounts{}
	s := newTestServerSvc(t, Config{Listeners: []Listener{l}}, Services{Replicas: r}, m)
	c := dialRaw(t, s.Addrs()["SASL"])
	if resp := c.loginPlain(1, "alice", "alice-secret"); resp.ErrorCode != 0 {
		t.Fatalf("login: error %d", resp.ErrorCode)
	}
	handOver(t, s, c)

	req := produceOf(60, 200<<10)
	batch := encodeRequest(1, "c", handshakeReq("PLAIN"))
	batch = append(batch, encodeRequest(2, "c", authReq(2, plainToken("alice", "alice-secret")))...)
	batch = append(batch, encodeRequest(3, "c", req)...)
	c.write(batch)
	hs := kmsg.NewPtrSASLHandshakeResponse()
	hs.Version = 1
	if corr := c.readResp(hs); corr != 1 || hs.ErrorCode != 0 {
		t.Fatalf("re-authentication's handshake: corr %d error %d", corr, hs.ErrorCode)
	}
	auth := kmsg.NewPtrSASLAuthenticateResponse()
	auth.Version = 2
	if corr := c.readResp(auth); corr != 2 || auth.ErrorCode != 0 {
		t.Fatalf("re-authentication: corr %d error %d", corr, auth.ErrorCode)
	}
	if corr := readProduce(t, c); corr != 3 {
		t.Fatalf("the produce behind the re-authentication answered with correlation id %d", corr)
	}
	if got := r.records(); !bytes.Equal(got[len(got)-1], req.Topics[0].Partitions[0].Records) {
		t.Fatal("the produce behind the re-authentication reached the handler corrupted")
	}
	if _, _, reauth, _ := m.get(); reauth != 1 {
		t.Fatalf("%d re-authentications counted, want 1", reauth)
	}
	c.Close()

	// A SaslAuthenticate over the size pipelined behind the handshake is
	// sized once the handshake has begun the re-authentication: refused,
	// the connection closes without answering it.
	c = dialRaw(t, s.Addrs()["SASL"])
	if resp := c.loginPlain(1, "alice", "alice-secret"); resp.ErrorCode != 0 {
		t.Fatalf("login: error %d", resp.ErrorCode)
	}
	handOver(t, s, c)
	batch = encodeRequest(1, "c", handshakeReq("PLAIN"))
	batch = append(batch, encodeRequest(2, "c", authReq(2, make([]byte, 100<<10)))...)
	c.write(batch)
	if corr := c.readResp(hs); corr != 1 || hs.ErrorCode != 0 {
		t.Fatalf("re-authentication's handshake: corr %d error %d", corr, hs.ErrorCode)
	}
	c.expectClosed(5 * time.Second)
	if h := s.readersHandedOver.Load(); h != 2 {
		t.Fatalf("reading was handed over %d times, want once a connection", h)
	}
	settled(t, s)
}
