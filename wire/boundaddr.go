package wire

import (
	"net"
	"strconv"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// boundAddr asks the kernel which address eng's listener got, so port 0
// reports the port actually bound; gnet only keeps the address it was
// given. It falls back to configured.
func boundAddr(eng gnet.Engine, configured string) string {
	fd, err := eng.Dup()
	if err != nil {
		return configured
	}
	defer unix.Close(fd) //nolint:errcheck // a dup of the listener; nothing to recover
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return configured
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	case *unix.SockaddrInet6:
		return net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	}
	return configured
}
