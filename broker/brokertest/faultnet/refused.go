package faultnet

import (
	"net"
	"testing"
)

// RefusedAddr returns a loopback address nothing listens on, so a dial to
// it is refused at once, as a stopped node's port is: a port the kernel
// handed out and that was released again.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
