//go:build linux

package wire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// sendfileSupported: Fetch responses may go out with sendfile(2).
const sendfileSupported = true

// maxSendfileChunk bounds one sendfile(2) call (Linux moves at most
// 0x7ffff000 bytes a call anyway).
const maxSendfileChunk = 1 << 30

// dupSocket duplicates the connection's descriptor for a direct write.
// Loop only, while the connection is open (see socketGrant).
func dupSocket(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}

func closeSocket(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd)
	}
}

// writeDirect writes d on sock, a duplicate of the connection's
// non-blocking socket, which it takes over and closes: header runs with
// send(2) (MSG_MORE while file data follows, so a partition's few header
// bytes do not leave as a packet of their own) and file data with
// sendfile(2), each resuming where a partial call stopped. On EAGAIN the
// goroutine parks in Go's netpoller until the socket is writable (no
// thread held, no busy loop), for at most stall (0: no limit) each time.
// ctx being done ends the transfer. progress is called with every chunk
// sent; writeDirect returns how many bytes went out.
func writeDirect(ctx context.Context, sock int, d *directFetch, stall time.Duration, progress func(int)) (int64, error) {
	f := os.NewFile(uintptr(sock), "kafka-socket") // non-blocking: registered with the netpoller
	if f == nil {
		return 0, errors.New("wire: bad socket descriptor")
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	w := &directWriter{d: d, f: f, stall: stall, progress: progress}
	stop := context.AfterFunc(ctx, w.cancel)
	defer stop()
	err = rc.Write(w.step)
	if err == nil {
		err = w.err
	}
	switch {
	case err == nil:
		return w.sent, nil
	case ctx.Err() != nil:
		return w.sent, fmt.Errorf("wire: connection closed during a fetch response: %w", ctx.Err())
	case errors.Is(err, os.ErrDeadlineExceeded):
		return w.sent, fmt.Errorf("wire: client read nothing for %v (connections.max.idle.ms): %w", stall, err)
	default:
		return w.sent, fmt.Errorf("wire: sending a fetch response: %w", err)
	}
}

// directWriter is one transfer's position: part 2k is header run k,
// part 2k+1 is cut k, off is the progress within the part.
type directWriter struct {
	d        *directFetch
	f        *os.File
	stall    time.Duration
	progress func(int)

	part int
	off  int64
	sent int64
	err  error

	mu       sync.Mutex
	canceled bool // ctx is done: the deadline stays in the past
}

func (w *directWriter) partLen(k int) int64 {
	if k%2 == 0 {
		return int64(len(w.d.part(k / 2)))
	}
	return w.d.cuts[k/2].n
}

// step writes as much as the socket takes, on the netpoller's terms:
// true when done or failed (w.err), false to wait for writability.
func (w *directWriter) step(fd uintptr) bool {
	sock := int(fd)
	last := 2 * len(w.d.cuts)
	for w.part <= last {
		if w.off == w.partLen(w.part) {
			w.part++
			w.off = 0
			continue
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
				w.err = errSegmentTruncated
				return true
			}
		}
		if err != nil {
			n = 0
		}
		if n > 0 {
			w.off += int64(n)
			w.sent += int64(n)
			w.progress(n)
		}
		switch err {
		case nil, unix.EINTR:
		case unix.EAGAIN:
			w.armDeadline()
			return false
		default:
			w.err = err
			return true
		}
	}
	return true
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

// armDeadline bounds the coming wait for writability, unless the
// transfer was canceled (the deadline must then stay in the past).
func (w *directWriter) armDeadline() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.canceled || w.stall <= 0 {
		return
	}
	_ = w.f.SetWriteDeadline(time.Now().Add(w.stall))
}

// cancel ends a wait for writability at once: the connection closed.
func (w *directWriter) cancel() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.canceled = true
	_ = w.f.SetWriteDeadline(time.Unix(1, 0))
}
