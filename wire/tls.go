package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
)

// TLS listeners (security protocol SSL). gnet does not terminate TLS, so
// an SSL listener's acceptor hands each admitted connection to a goroutine
// that runs the handshake with Go's crypto/tls and then relays the
// plaintext through a socketpair whose other end is enrolled in the
// listener's gnet event loops like any plaintext connection. Everything
// past the handshake is the plaintext path unchanged: framing, the
// request pipeline, in-order responses, the in-flight and buffered-bytes
// backpressure (a paused connection stops reading the socketpair, which
// fills, which stops the relay reading the TLS socket, which closes the
// TCP window), idle closing, the connection quotas (taken at accept, as
// for plaintext, and given back by OnClose or by a failed handshake).
// Fetch data is copied (sendfile serves plaintext listeners only, as in
// Kafka, whose SslTransportLayer cannot transferTo either).
//
// The price is a copy of every byte through the socketpair and two relay
// goroutines per connection; a native net+crypto/tls serving path (the
// benchmark control DESIGN.md mentions) would avoid it.

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
	tc := tls.Server(c, l.cfg.TLS)
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
	adm := &admission{ip: ip, host: hostOf(c.RemoteAddr()), principal: sslPrincipal(tc.ConnectionState())}
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
	go relayTLS(tc, outer)
}

// relayTLS copies between the TLS connection and the relay's end of the
// socketpair until either side ends, then closes both: a client gone
// closes the gnet connection (OnClose), and the gnet connection closed
// (idle, a failed request, shutdown) closes the client's, after the
// responses written before it have been relayed.
func relayTLS(tc *tls.Conn, outer net.Conn) {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			_ = outer.Close()
			_ = tc.Close()
		})
	}
	go func() {
		_, _ = io.Copy(outer, tc)
		closeBoth()
	}()
	_, _ = io.Copy(tc, outer)
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
