package wire

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The acceptor: accept(2) on our listening socket, apply the connection
// quotas (quotas.go), hand the connection to gnet's event loops.
//
// accept(2) fails for reasons that pass: the process or the system is out
// of descriptors (EMFILE, ENFILE), the kernel is out of memory for the
// socket (ENOBUFS, ENOMEM), or, as accept(2) documents for Linux, a
// network error already pending on the new connection (EPROTO,
// ENETDOWN, EHOSTUNREACH, ...), to be treated like EAGAIN. Kafka's
// Acceptor logs such an error and accepts again; we also back off as Go's
// net/http Server does (5 ms doubling to 1 s), so a process out of
// descriptors does not spin, and log at most once per acceptLogEvery
// with the count of failures not logged. Each failure is counted
// (ListenerMetrics.AcceptFailed). A connection that waits meanwhile stays
// in the kernel's listen backlog and is accepted as soon as descriptors
// are free again.
//
// A full descriptor table is not answered with libev's spare-descriptor
// trick (close a reserved descriptor, accept, close the connection,
// reopen the reserve), which would turn waiting clients into refused
// ones: the connection quotas are what keeps a storm of connections from
// taking the last descriptors (the broker derives max.connections from
// the open-file limit unless it is set), and when something else took
// them the storm's clients are better off waiting a second in the backlog
// than being dropped while the broker recovers. A spare descriptor would
// also be one that storage cannot have.
//
// Only errors saying the listening socket itself is gone end the
// acceptor (EBADF, EINVAL: no longer listening, ENOTSOCK, EFAULT, or it
// was closed by someone but us); the server then reports itself failed
// (Server.Failed) so the broker can stop rather than run on deaf.

const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
	// acceptLogEvery spaces the log lines of accept failures and of
	// connections refused by the per-address limit.
	acceptLogEvery = 10 * time.Second
	// blockLogEvery spaces the lines saying the acceptor waits for a
	// connection slot.
	blockLogEvery = time.Minute
)

// admission travels with a connection from the acceptor to OnOpen, as
// the gnet connection's context until OnOpen replaces it.
type admission struct {
	ip        netip.Addr  // counted by the quotas under this address
	host      string      // the client's address when the socket is not the client's (TLS, tls.go)
	principal string      // the TLS client's principal ("" for plaintext)
	tls       *tls.Conn   // the TLS connection responses are written into (nil for plaintext)
	opened    atomic.Bool // OnOpen ran: the connection is the loop's now
}

// errNotRegistered: gnet could not add the connection to its loop's poller
// (epoll_ctl failed); it closed the connection without opening it.
var errNotRegistered = errors.New("wire: the event loop could not register the connection")

// acceptLoop is the listener's acceptor; it returns when the listener
// stops or its socket is no longer usable.
func (l *listener) acceptLoop() {
	defer close(l.accepted)
	var backoff time.Duration
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if l.isStopping() {
				return
			}
			if listenerGone(err) {
				l.srv.fail(fmt.Errorf("wire: listener %s on %s can no longer accept connections: %w", l.cfg.Name, l.addr, err))
				return
			}
		} else if err = l.admit(c); errors.Is(err, errListenerStopping) {
			return
		}
		if err == nil {
			backoff = 0
			continue
		}
		backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
		l.acceptFailed(err, backoff)
		select {
		case <-time.After(backoff):
		case <-l.stopping:
			return
		}
	}
}

func (l *listener) isStopping() bool {
	select {
	case <-l.stopping:
		return true
	default:
		return false
	}
}

// admit applies the quotas to a connection just accepted and hands it to
// the event loops. It returns nil once the connection is served or has
// been refused under the quotas, errListenerStopping, or why the loops
// could not take it (a descriptor shortage, counted as an accept failure).
func (l *listener) admit(c net.Conn) error {
	ip := remoteIP(c)
	blocked, err := l.srv.quotas.inc(l.cfg.Name, ip, l.stopping, l.waitingForSlot)
	if blocked > 0 {
		l.srv.lmetrics.AcceptorBlocked(l.cfg.Name, blocked)
	}
	var perIP *perIPLimitError
	switch {
	case errors.As(err, &perIP):
		// Counted before the close, so that whoever sees the
		// connection closed also sees it counted.
		l.srv.lmetrics.ConnectionRejected(l.cfg.Name, RejectedPerIP)
		_ = c.Close()
		if ok, skipped := l.rejectLog.allow(l.srv.clock.Now()); ok {
			l.srv.logger.Info(perIP.Error(), "listener", l.cfg.Name, "rejections_not_logged", skipped)
		}
		return nil
	case err != nil:
		_ = c.Close()
		return err
	}
	if l.cfg.TLS != nil {
		// The handshake runs on its own goroutine: a slow or silent
		// client must not hold up the acceptor (tls.go).
		l.handshakes.Add(1)
		go l.serveTLS(c, ip)
		return nil
	}
	adm := &admission{ip: ip}
	// EnrollContext duplicates the descriptor, registers the duplicate
	// with the least loaded loop, waits for OnOpen and closes c. It
	// leaks the duplicate if anything fails after the dup: only the
	// socket options gnet would set (none are asked for, see start) or
	// parsing c's remote address, which accept(2) gave as a literal.
	_, err = l.cli.EnrollContext(c, adm)
	if err == nil && !adm.opened.Load() {
		err = errNotRegistered
	}
	if err != nil {
		l.srv.quotas.dec(l.cfg.Name, ip)
	}
	return err
}

// waitingForSlot runs when the acceptor starts waiting for a connection
// slot.
func (l *listener) waitingForSlot() {
	if ok, skipped := l.blockLog.allow(l.srv.clock.Now()); ok {
		l.srv.logger.Info("connection limit reached: new connections wait in the listen backlog until one closes",
			"listener", l.cfg.Name, "connections", l.srv.quotas.connections(), "waits_not_logged", skipped)
	}
}

// acceptFailed counts and, now and then, logs an accept failure.
func (l *listener) acceptFailed(err error, retryIn time.Duration) {
	l.srv.lmetrics.AcceptFailed(l.cfg.Name, acceptErrorReason(err))
	if ok, skipped := l.acceptLog.allow(l.srv.clock.Now()); ok {
		l.srv.logger.Error("accepting a connection failed; accepting again after a pause",
			"listener", l.cfg.Name, "addr", l.addr, "err", err, "retry_in", retryIn, "failures_not_logged", skipped)
	}
}

// listenerGone reports whether an error of Accept means the listening
// socket is no longer usable, as opposed to a failure that passes.
func listenerGone(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return true
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case syscall.EBADF, syscall.EINVAL, syscall.ENOTSOCK, syscall.EFAULT:
		return true
	}
	return false
}

// acceptErrorReason labels an accept failure for the metric: the errno's
// name for the resource shortages, "other" for the rest.
func acceptErrorReason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.EMFILE:
			return "EMFILE"
		case syscall.ENFILE:
			return "ENFILE"
		case syscall.ENOBUFS:
			return "ENOBUFS"
		case syscall.ENOMEM:
			return "ENOMEM"
		}
	}
	return "other"
}

// remoteIP is the address the quotas count c under: IPv4 clients of a
// dual-stack listener as IPv4, without an IPv6 zone.
func remoteIP(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap().WithZone("")
	}
	return netip.Addr{}
}

// logEvery lets a log line through at most once per every, counting the
// ones it held back.
type logEvery struct {
	every time.Duration

	mu      sync.Mutex
	next    time.Time
	skipped int
}

// allow reports whether to log now, and how many lines were held back
// since the last one logged.
func (r *logEvery) allow(now time.Time) (bool, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Before(r.next) {
		r.skipped++
		return false, 0
	}
	skipped := r.skipped
	r.next, r.skipped = now.Add(r.every), 0
	return true, skipped
}
