package ctrlrpc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// Dialer opens a connection to another node (net.Dialer.DialContext's
// shape). Tests pass one that can cut links.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// DefaultDialer dials with a net.Dialer.
func DefaultDialer(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// classifyTimeout bounds how long an accepted connection may stay silent
// before its first byte tells what it carries.
const classifyTimeout = 10 * time.Second

// StreamLayer is a raft.StreamLayer over one listener shared with the
// controller RPC: Accept returns the connections whose first byte is not
// Magic (raft's transport, with that byte given back), and hands the others
// to the Server. Dial opens plain raft connections; the Client opens
// controller ones.
type StreamLayer struct {
	ln        net.Listener
	advertise net.Addr
	dial      Dialer
	server    *Server
	logger    *slog.Logger

	raftConns chan net.Conn
	// closed is done once Close ran. Accept and the accept loop watch its
	// Done channel; every Dial derives from it, so closing ends a dial
	// and its waits.
	closed    context.Context
	markClose context.CancelFunc
	closeOnce sync.Once
	wg        sync.WaitGroup

	mu      sync.Mutex
	pending map[net.Conn]struct{} // accepted, not yet classified
	// raft holds raft's connections, dialed and accepted, until they are
	// closed: Abort closes them.
	raft map[*raftConn]struct{}
}

// NewStreamLayer serves ln. advertise is the address raft tells the other
// nodes (nil: ln's address); dial opens raft connections (nil:
// DefaultDialer); server answers controller connections (nil: they are
// closed).
func NewStreamLayer(ln net.Listener, advertise net.Addr, dial Dialer, server *Server, logger *slog.Logger) *StreamLayer {
	if dial == nil {
		dial = DefaultDialer
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &StreamLayer{
		ln: ln, advertise: advertise, dial: dial, server: server, logger: logger,
		raftConns: make(chan net.Conn),
		pending:   map[net.Conn]struct{}{},
		raft:      map[*raftConn]struct{}{},
	}
	s.closed, s.markClose = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.acceptLoop()
	return s
}

func (s *StreamLayer) acceptLoop() {
	defer s.wg.Done()
	backoff := 5 * time.Millisecond
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closed.Done():
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient failure (EMFILE…): back off as net/http does.
			s.logger.Warn("controller listener accept failed", "err", err)
			select {
			case <-time.After(backoff):
			case <-s.closed.Done():
				return
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		s.mu.Lock()
		s.pending[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go s.classify(c)
	}
}

// classify reads the first byte of a connection and routes it.
func (s *StreamLayer) classify(c net.Conn) {
	defer s.wg.Done()
	var first [1]byte
	_ = c.SetReadDeadline(time.Now().Add(classifyTimeout))
	_, err := io.ReadFull(c, first[:])
	_ = c.SetReadDeadline(time.Time{})
	s.mu.Lock()
	delete(s.pending, c)
	s.mu.Unlock()
	if err != nil {
		c.Close()
		return
	}
	if first[0] == Magic {
		if s.server == nil {
			c.Close()
			return
		}
		s.server.ServeConn(c)
		return
	}
	rc := s.track(&prefixConn{Conn: c, first: first[0], hasFirst: true})
	select {
	case s.raftConns <- rc:
	case <-s.closed.Done():
		rc.Close()
	}
}

// Accept implements net.Listener for raft's transport.
func (s *StreamLayer) Accept() (net.Conn, error) {
	select {
	case c := <-s.raftConns:
		return c, nil
	case <-s.closed.Done():
		return nil, net.ErrClosed
	}
}

// Close stops accepting and closes the listener, the connections not yet
// classified and the server's connections. Raft's own connections are
// closed by its transport.
func (s *StreamLayer) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.markClose()
		err = s.ln.Close()
		s.mu.Lock()
		for c := range s.pending {
			c.Close()
		}
		s.mu.Unlock()
		if s.server != nil {
			s.server.Close()
		}
		s.wg.Wait()
	})
	return err
}

// Addr implements net.Listener: the advertised address if any.
func (s *StreamLayer) Addr() net.Addr {
	if s.advertise != nil {
		return s.advertise
	}
	return s.ln.Addr()
}

// dialRetryInterval is how often Dial tries again a node that refuses the
// connection.
const dialRetryInterval = 100 * time.Millisecond

// Dial implements raft.StreamLayer. A node that refuses the connection (its
// process is down, the port closed) is tried again every
// dialRetryInterval until timeout, so a refused dial waits like one to an
// unreachable node instead of failing at once. The reason is hashicorp/raft's
// replication goroutine: it sleeps 10ms·2^(failures-2), up to about 10s,
// after each failed AppendEntries, so fast failures against a voter that is
// down for 20s piled up that backoff, and the voter waited up to 10s after
// it restarted before the leader sent it anything (it then joins the
// cluster that much later). Now the attempt under way connects as soon as
// the node listens again. Kafka's KRaft voters pull from the leader and
// catch up the moment they start; this brings ours close to that. Closing
// the stream layer ends the wait.
func (s *StreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx := s.closed
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	for {
		c, err := s.dial(ctx, "tcp", string(address))
		if err == nil {
			return s.track(c), nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, err
		}
		t := time.NewTimer(dialRetryInterval)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, err
		}
	}
}

// Abort is Close for a node that halts: it also closes raft's own
// connections, dialed and accepted, as a halted process drops them. Raft
// goroutines that will never finish (parked in a failed store,
// raftmeta/store_failure.go) keep theirs otherwise: the transport does not
// pool a replication pipeline's connection, so it would not close it, and
// a parked leader's pipeline goes on sending empty AppendEntries over it,
// which the followers take for heartbeats and never elect another leader.
func (s *StreamLayer) Abort() error {
	err := s.Close()
	s.mu.Lock()
	conns := make([]*raftConn, 0, len(s.raft))
	for c := range s.raft {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	return err
}

// raftConn is one of raft's connections, known to its stream layer until
// closed.
type raftConn struct {
	net.Conn
	s    *StreamLayer
	once sync.Once
}

func (s *StreamLayer) track(c net.Conn) *raftConn {
	rc := &raftConn{Conn: c, s: s}
	s.mu.Lock()
	s.raft[rc] = struct{}{}
	s.mu.Unlock()
	return rc
}

func (c *raftConn) Close() error {
	c.once.Do(func() {
		c.s.mu.Lock()
		delete(c.s.raft, c)
		c.s.mu.Unlock()
	})
	return c.Conn.Close()
}

// prefixConn gives back the byte read to classify the connection.
type prefixConn struct {
	net.Conn
	mu       sync.Mutex
	first    byte
	hasFirst bool
}

func (c *prefixConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if c.hasFirst && len(p) > 0 {
		p[0] = c.first
		c.hasFirst = false
		c.mu.Unlock()
		return 1, nil
	}
	c.mu.Unlock()
	return c.Conn.Read(p)
}

var _ raft.StreamLayer = (*StreamLayer)(nil)
