//go:build linux

package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sendfileSupported: Fetch responses may go out with sendfile(2).
const sendfileSupported = true

// maxSendfileChunk bounds one sendfile(2) call (Linux moves at most
// 0x7ffff000 bytes a call anyway).
const maxSendfileChunk = 1 << 30

// dupSocket duplicates the connection's descriptor for direct writes.
// Loop only, while the connection is open (see socketGrant).
func dupSocket(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}

// directSocket is a connection's socket as its writer holds it once the
// loop has lent it (sendfile.go): a duplicate of gnet's descriptor,
// registered with Go's netpoller, so a write that finds the socket full
// parks the goroutine, not a thread. It lives as long as the connection:
// closeConn (on the loop) closes it, which ends a parked write at once
// and releases the socket once no write is inside a system call.
type directSocket struct {
	f  *os.File
	rc syscall.RawConn

	// Writer only: a write deadline is left from an earlier wait, to be
	// cleared before the next transfer (an expired one would fail it).
	armed bool

	mu       sync.Mutex
	canceled bool // a transfer's ctx ended: the deadline stays in the past
}

// newDirectSocket wraps fd, a duplicate it takes over. Loop only.
func newDirectSocket(fd int) (*directSocket, error) {
	f := os.NewFile(uintptr(fd), "kafka-socket") // non-blocking: registered with the netpoller
	if f == nil {
		_ = unix.Close(fd)
		return nil, errors.New("wire: bad socket descriptor")
	}
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &directSocket{f: f, rc: rc}, nil
}

// close releases the duplicate; a write under way fails.
func (s *directSocket) close() { _ = s.f.Close() }

// writeStep makes one system call's worth of progress on a transfer: the
// bytes it sent, or done once everything is out.
type writeStep func(sock int) (n int, done bool, err error)

// run drives a transfer on the netpoller's terms: on EAGAIN the
// goroutine parks until the socket is writable, for at most stall (0: no
// limit) each time; ctx being done ends it. progress is called with
// every chunk sent; run returns how many bytes went out.
func (s *directSocket) run(ctx context.Context, stall time.Duration, step writeStep, progress func(int)) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("wire: connection closed: %w", err)
	}
	if s.armed {
		_ = s.f.SetWriteDeadline(time.Time{})
		s.armed = false
	}
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()
	var sent int64
	var failed error
	err := s.rc.Write(func(fd uintptr) bool {
		for {
			n, done, err := step(int(fd))
			if n > 0 {
				sent += int64(n)
				progress(n)
			}
			switch {
			case err == nil && done:
				return true
			case err == nil, errors.Is(err, unix.EINTR):
			case errors.Is(err, unix.EAGAIN):
				s.armDeadline(stall)
				return false
			default:
				failed = err
				return true
			}
		}
	})
	if err == nil {
		err = failed
	}
	switch {
	case err == nil:
		return sent, nil
	case ctx.Err() != nil:
		return sent, fmt.Errorf("wire: connection closed during a response: %w", ctx.Err())
	case errors.Is(err, os.ErrDeadlineExceeded):
		return sent, fmt.Errorf("wire: client read nothing for %v (connections.max.idle.ms): %w", stall, err)
	default:
		return sent, fmt.Errorf("wire: sending a response: %w", err)
	}
}

// read reads once into the slice next returns, parking the goroutine in
// the netpoller while the socket has nothing; parked runs before each
// park. It returns io.EOF at the client's end of stream, and
// os.ErrDeadlineExceeded once interruptRead has run.
func (s *directSocket) read(next func() []byte, parked func()) (int, error) {
	var n int
	var rerr error
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = unix.Read(int(fd), next())
			switch {
			case errors.Is(rerr, unix.EINTR):
				continue
			case errors.Is(rerr, unix.EAGAIN):
				parked()
				return false
			}
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// interruptRead ends a parked read, and fails every later one, with
// os.ErrDeadlineExceeded: Shutdown has begun and nothing more is read.
func (s *directSocket) interruptRead() { _ = s.f.SetReadDeadline(time.Unix(1, 0)) }

// armDeadline bounds the coming wait for writability, unless a transfer
// was canceled (the deadline must then stay in the past).
func (s *directSocket) armDeadline(stall time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.canceled || stall <= 0 {
		return
	}
	_ = s.f.SetWriteDeadline(time.Now().Add(stall))
	s.armed = true
}

// cancel ends a wait for writability at once: the connection closed.
func (s *directSocket) cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.canceled = true
	_ = s.f.SetWriteDeadline(time.Unix(1, 0))
}

// writeDirect writes d on sock: header runs with send(2) (MSG_MORE while
// file data follows, so a partition's few header bytes do not leave as a
// packet of their own) and file data with sendfile(2), each resuming
// where a partial call stopped.
func writeDirect(ctx context.Context, sock *directSocket, d *directFetch, stall time.Duration, progress func(int)) (int64, error) {
	w := &directWriter{d: d}
	return sock.run(ctx, stall, w.step, progress)
}

// writeBuffers writes bufs, whole frames, on sock with sendmsg(2) over
// as many of them as one call takes.
func writeBuffers(ctx context.Context, sock *directSocket, bufs [][]byte, stall time.Duration, progress func(int)) (int64, error) {
	w := &buffersWriter{bufs: bufs}
	return sock.run(ctx, stall, w.step, progress)
}

// directWriter is one Fetch transfer's position: part 2k is header run
// k, part 2k+1 is cut k, off is the progress within the part.
type directWriter struct {
	d    *directFetch
	part int
	off  int64
}

func (w *directWriter) partLen(k int) int64 {
	if k%2 == 0 {
		return int64(len(w.d.part(k / 2)))
	}
	return w.d.cuts[k/2].n
}

func (w *directWriter) step(sock int) (int, bool, error) {
	last := 2 * len(w.d.cuts)
	for w.part <= last && w.off == w.partLen(w.part) {
		w.part++
		w.off = 0
	}
	if w.part > last {
		return 0, true, nil
	}
	var n int
	var err error
	if w.part%2 == 0 {
		flags := unix.MSG_NOSIGNAL
		if w.part < last {
			flags |= unix.MSG_MORE
		}
		n, err = unix.SendmsgN(sock, w.d.part(w.part / 2)[w.off:], nil, nil, flags)
	} else {
		c := &w.d.cuts[w.part/2]
		n, err = c.sendfile(sock, c.pos+w.off, c.n-w.off)
		if err == nil && n == 0 {
			return 0, false, errSegmentTruncated
		}
	}
	if err != nil {
		return 0, false, err
	}
	w.off += int64(n)
	return n, false, nil
}

// buffersWriter is a run of frames' position: bufs[0][off:] is next.
type buffersWriter struct {
	bufs [][]byte
	off  int
}

func (w *buffersWriter) step(sock int) (int, bool, error) {
	for len(w.bufs) > 0 && w.off == len(w.bufs[0]) {
		w.bufs = w.bufs[1:]
		w.off = 0
	}
	if len(w.bufs) == 0 {
		return 0, true, nil
	}
	iov := w.bufs[:min(len(w.bufs), maxIovecs)]
	first := iov[0]
	iov[0] = first[w.off:]
	n, err := unix.SendmsgBuffers(sock, iov, nil, nil, unix.MSG_NOSIGNAL)
	iov[0] = first
	if err != nil {
		return 0, false, err
	}
	// Advance past what went out.
	left := n
	for left > 0 {
		room := len(w.bufs[0]) - w.off
		if left < room {
			w.off += left
			break
		}
		left -= room
		w.bufs = w.bufs[1:]
		w.off = 0
	}
	return n, false, nil
}

// sendfile moves up to n bytes of the cut from offset off to sock,
// holding the file's descriptor for the call.
func (c *fileCut) sendfile(sock int, off, n int64) (int, error) {
	var sent int
	var err error
	call := func(fd uintptr) {
		o := off
		sent, err = unix.Sendfile(sock, int(fd), &o, int(min(n, maxSendfileChunk)))
	}
	if c.src.rc != nil {
		if cerr := c.src.rc.Control(call); cerr != nil {
			return 0, fmt.Errorf("segment file %s: %w", c.file.Name(), cerr)
		}
	} else {
		call(uintptr(c.src.fd))
	}
	return sent, err
}
