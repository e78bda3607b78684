package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
)

// TLS listeners (security protocol SSL, and SASL_SSL). gnet does not
// terminate TLS, so an SSL listener's acceptor hands each admitted
// connection to a goroutine that runs the handshake with Go's crypto/tls
// and then relays the client's bytes through a socketpair whose other end
// is enrolled in the listener's gnet event loops like any plaintext
// connection. Reading is the plaintext path unchanged: framing, the
// request pipeline, the in-flight and buffered-bytes backpressure (a
// paused connection stops reading the socketpair, which fills, which stops
// the relay reading the TLS socket, which closes the TCP window), idle
// closing, the connection quotas (taken at accept, as for plaintext, and
// given back by OnClose or by a failed handshake). Responses do not go
// through gnet or the socketpair: the connection's writer writes them
// into the tls.Conn itself, in order (tls_write.go). Fetch data is copied
// (sendfile serves plaintext listeners only, as in Kafka, whose
// SslTransportLayer cannot transferTo either).
//
// The price: every request byte is copied once more through the
// socketpair, by one relay goroutine per connection, a whole request
// frame per write (tls_relay.go); a second goroutine waits for gnet's
// end to close. Requests are small next to Fetch responses,
// which is why only the write direction was taken off the relay (issue 25:
// on a TLS catch-up the relayed responses cost ~40% of the broker's CPU
// and buffered most of each response in gnet). Still left: crypto/tls
// writes each 16 KiB record with its own system call.

// DefaultSSLHandshakeTimeout bounds a TLS handshake: a client that
// connects and never finishes the handshake is closed after it. Kafka has
// no separate setting (an unfinished handshake lasts until
// connections.max.idle.ms); ten seconds is far more than a handshake
// takes and keeps slow-loris connections from holding connection slots.
const DefaultSSLHandshakeTimeout = 10 * time.Second

// RejectedSSLHandshake is the ConnectionRejected reason of a connection
// whose TLS handshake failed or timed out (garbage, a plaintext client,
// an untrusted client certificate).
const RejectedSSLHandshake = "ssl_handshake"

// serveTLS runs the handshake of an admitted connection on an SSL listener
// and, when it succeeds, enrolls it in the event loops. The quota slot
// taken at accept is given back here if the connection never opens.
func (l *listener) serveTLS(c net.Conn, ip netip.Addr) {
	defer l.handshakes.Done()
	opened := false
	defer func() {
		if !opened {
			l.srv.quotas.dec(l.cfg.Name, ip)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), l.srv.cfg.SSLHandshakeTimeout)
	defer cancel()
	go func() {
		select {
		case <-l.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	tc := tls.Server(c, l.tlsConfig.Load())
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		if l.isStopping() {
			return
		}
		l.srv.lmetrics.ConnectionRejected(l.cfg.Name, RejectedSSLHandshake)
		if ok, skipped := l.handshakeLog.allow(l.srv.clock.Now()); ok {
			l.srv.logger.Info("SSL handshake failed; connection closed", "listener", l.cfg.Name,
				"client", c.RemoteAddr().String(), "err", err, "failures_not_logged", skipped)
		}
		return
	}
	if l.isStopping() {
		_ = tc.Close()
		return
	}
	inner, outer, err := socketPair()
	if err != nil {
		_ = tc.Close()
		l.acceptFailed(fmt.Errorf("socketpair for a TLS connection: %w", err), 0)
		return
	}
	adm := &admission{ip: ip, host: hostOf(c.RemoteAddr()), principal: sslPrincipal(tc.ConnectionState()), tls: tc}
	// EnrollContext takes (and closes) inner; outer is the relay's end.
	if _, err = l.cli.EnrollContext(inner, adm); err == nil && !adm.opened.Load() {
		err = errNotRegistered
	}
	if err != nil {
		_ = outer.Close()
		_ = tc.Close()
		l.acceptFailed(err, 0)
		return
	}
	opened = true
	go relayTLS(tc, outer, &l.srv.bufs)
}

// relayTLS copies the client's bytes from the TLS connection to the
// relay's end of the socketpair, whole frames at a time, for gnet to frame, until either side
// ends, then closes both: a client gone closes the gnet connection
// (OnClose), and the gnet connection closed (idle, a failed request,
// shutdown) closes the client's. Responses do not come this way: the
// connection's writer puts them into tc itself (tls_write.go), so from
// gnet's side the relay only waits for the end, which comes after the
// responses before a close have been written (the loop closes once
// cn.unsent is 0).
func relayTLS(tc *tls.Conn, outer net.Conn, pool *bufferPool) {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			_ = outer.Close()
			_ = tc.Close()
		})
	}
	go func() {
		_ = newFrameRelay(outer, tc, pool).run() // frame by frame (tls_relay.go)
		closeBoth()
	}()
	// Nothing writes to gnet's end, so this read returns at its close.
	// Bytes would mean a response bypassed the writer; rather than let
	// them interleave with the writer's, the connection ends.
	var b [1]byte
	_, _ = outer.Read(b[:])
	closeBoth()
}

// socketPair returns two connected Unix stream sockets as net.Conns.
func socketPair() (net.Conn, net.Conn, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	a, err := fileConn(fds[0], "strait-tls-inner")
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, err
	}
	b, err := fileConn(fds[1], "strait-tls-outer")
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

func fileConn(fd int, name string) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close() // FileConn duplicated it
	return net.FileConn(f)
}

// sslPrincipal is Kafka's DefaultKafkaPrincipalBuilder for SSL: the
// client certificate's subject as a User principal, ANONYMOUS without
// one. Kafka writes the subject in RFC 2253 form (X500Principal.getName),
// as pkix.Name.String does.
func sslPrincipal(cs tls.ConnectionState) string {
	if len(cs.PeerCertificates) == 0 {
		return "User:ANONYMOUS"
	}
	return "User:" + cs.PeerCertificates[0].Subject.String()
}

func hostOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	return ""
}

// errTLSConfig: an SSL listener without TLS material.
var errTLSConfig = errors.New("an SSL or SASL_SSL listener needs its TLS configuration")
