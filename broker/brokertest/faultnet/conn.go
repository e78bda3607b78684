package faultnet

import (
	"bytes"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// maxQueuedWrites bounds the writes a delayed connection holds back; a
// Write beyond it blocks, as a full socket send buffer would.
const maxQueuedWrites = 1024

// conn wraps the dialing side of one inter-node connection and applies the
// faults of its link in both directions: Write carries bytes along link,
// Read carries bytes along its reverse (see the package comment for why
// only this side is wrapped). Addresses delegate to the socket through the
// embedded net.Conn, deadlines too (see SetDeadline).
type conn struct {
	net.Conn // the dialed socket
	n        *Network
	link     Link // dialer -> owner, the direction of Write

	dead      chan struct{} // closed when the socket is closed, by Close or a fault
	killOnce  sync.Once
	closeOnce sync.Once
	failure   atomic.Pointer[failure] // why the connection died, first cause wins

	wmu        sync.Mutex   // serialises Write, so queued and direct writes keep their order
	queue      chan pending // writes held back by a link delay
	inflight   atomic.Int64 // writes queued and not yet fully sent
	writerOnce sync.Once
	writerDone chan struct{} // closed when writeLoop ends (if it started)
}

var _ net.Conn = (*conn)(nil)

type failure struct {
	err   error
	fault bool // err is a *faultError to wrap per operation, else returned as is
}

type pending struct {
	due time.Time
	b   []byte
}

func newConn(n *Network, raw net.Conn, l Link) *conn {
	return &conn{
		Conn:       raw,
		n:          n,
		link:       l,
		dead:       make(chan struct{}),
		queue:      make(chan pending, maxQueuedWrites),
		writerDone: make(chan struct{}),
	}
}

// Read returns bytes sent owner->dialer, applying the faults of that
// direction.
func (c *conn) Read(b []byte) (int, error) {
	if err := c.failed("read"); err != nil {
		return 0, err
	}
	nr, err := c.Conn.Read(b)
	if ferr := c.failed("read"); ferr != nil {
		// Broken while blocked: report the reset, not the closed socket.
		return 0, ferr
	}
	if nr == 0 {
		return nr, err
	}
	in := Link{From: c.link.To, To: c.link.From}
	delay, drop := c.n.onData(in)
	if drop {
		c.fail(&faultError{link: in, cause: ErrLinkDropped, errno: syscall.ECONNRESET}, true)
		return 0, c.failed("read")
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-c.dead:
			t.Stop()
			return 0, c.deadError("read")
		}
	}
	return nr, err
}

// Write sends bytes dialer->owner, applying the faults of that direction.
// With a link delay it queues a copy of b and returns at once (the bytes
// are then "in flight"); an error sending them later resets the connection
// and shows on the next Read or Write, as a failed send does with a kernel
// socket. Queued writes are sent under the socket's write deadline at the
// time they are sent.
func (c *conn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.failed("write"); err != nil {
		return 0, err
	}
	delay, drop := c.n.onData(c.link)
	if drop {
		c.fail(&faultError{link: c.link, cause: ErrLinkDropped, errno: syscall.ECONNRESET}, true)
		return 0, c.failed("write")
	}
	// inflight == 0 means every queued write has been fully sent (the
	// writer decrements after the socket Write returns), and no Write can
	// queue meanwhile since we hold wmu: writing directly cannot overtake.
	if delay == 0 && c.inflight.Load() == 0 {
		nw, err := c.Conn.Write(b)
		if err != nil {
			if ferr := c.failed("write"); ferr != nil {
				return nw, ferr
			}
		}
		return nw, err
	}
	select {
	case <-c.dead:
		return 0, c.deadError("write")
	default:
	}
	c.writerOnce.Do(func() { go c.writeLoop() })
	c.inflight.Add(1)
	select {
	case c.queue <- pending{due: time.Now().Add(delay), b: bytes.Clone(b)}:
		return len(b), nil
	case <-c.dead:
		c.inflight.Add(-1)
		return 0, c.deadError("write")
	}
}

// writeLoop sends queued writes in order, each when due. It is the only
// goroutine a connection owns and ends when the connection dies.
func (c *conn) writeLoop() {
	defer close(c.writerDone)
	for {
		select {
		case <-c.dead:
			return
		case p := <-c.queue:
			if wait := time.Until(p.due); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-c.dead:
					t.Stop()
					return
				}
			}
			_, err := c.Conn.Write(p.b)
			c.inflight.Add(-1)
			if err != nil {
				// The caller's Write already succeeded; later bytes
				// must not follow a hole, so the stream ends here.
				c.fail(err, false)
				return
			}
		}
	}
}

// Close closes the socket and discards writes still held back by a link
// delay, like an abortive close; the inter-node protocols never rely on
// bytes written just before closing. It is idempotent: later calls, and a
// call after a fault already closed the socket, return nil.
func (c *conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.n.forget(c)
		err = c.kill()
	})
	return err
}

// SetDeadline, SetReadDeadline and SetWriteDeadline delegate to the
// socket, except after a fault: a reset kernel socket still accepts
// deadlines, and the fault must show on the next Read or Write (as
// ECONNRESET), not as "use of closed network connection" here.
func (c *conn) SetDeadline(t time.Time) error {
	return c.setDeadline(c.Conn.SetDeadline, t)
}

func (c *conn) SetReadDeadline(t time.Time) error {
	return c.setDeadline(c.Conn.SetReadDeadline, t)
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(c.Conn.SetWriteDeadline, t)
}

func (c *conn) setDeadline(set func(time.Time) error, t time.Time) error {
	if f := c.failure.Load(); f != nil && f.fault {
		return nil
	}
	return set(t)
}

// fail records err as the cause of death and closes the socket, so reads
// blocked on either end return at once. It reports whether err was the
// first cause.
func (c *conn) fail(err error, fault bool) bool {
	if !c.failure.CompareAndSwap(nil, &failure{err: err, fault: fault}) {
		return false
	}
	_ = c.kill()
	c.n.forget(c)
	return true
}

// kill closes the socket once and returns the error of that close (nil
// for every later call).
func (c *conn) kill() error {
	var err error
	c.killOnce.Do(func() {
		close(c.dead)
		err = c.Conn.Close()
	})
	return err
}

// failed returns the error op reports on a connection that died, or nil.
// A fault shows as the errno a reset socket gives, inside *net.OpError and
// *os.SyscallError as the net package builds it.
func (c *conn) failed(op string) error {
	f := c.failure.Load()
	if f == nil {
		return nil
	}
	if !f.fault {
		return f.err
	}
	return c.opError(op, &os.SyscallError{Syscall: op, Err: f.err})
}

// deadError is what op reports once the socket is closed.
func (c *conn) deadError(op string) error {
	if err := c.failed(op); err != nil {
		return err
	}
	return c.opError(op, net.ErrClosed)
}

func (c *conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}
