package brokertest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"testing"
)

// FreePorts returns n distinct loopback ports nothing listens on right
// now, for nodes whose addresses must be known before they start (voters
// name each other's CONTROLLER listeners; a restarted process serves where
// its clients already point). Every listener stays open until all n are
// picked, so no port comes back twice.
//
// The ports are drawn below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), never from it: a port the kernel hands
// to "127.0.0.1:0" may next be handed to an outgoing connection as its
// local port, and a node that binds it after that (at start, or after a
// restart) fails with "address already in use" (seen in the e2e tests of
// restarts, under load).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := freePorts(n)
	if err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	return ports
}

// FreePort is one such port.
func FreePort() (int, error) {
	ports, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

func freePorts(n int) ([]int, error) {
	lo, hi := portsOutsideEphemeral()
	ports := make([]int, 0, n)
	taken := make(map[int]bool, n)
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for tries := 0; len(ports) < n; tries++ {
		if tries > 100*n+1000 {
			return nil, fmt.Errorf("no free loopback port in [%d, %d] after %d tries", lo, hi, tries)
		}
		p := lo + rand.IntN(hi-lo+1)
		if taken[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue // in use: draw again
		}
		lns = append(lns, ln)
		taken[p] = true
		ports = append(ports, p)
	}
	return ports, nil
}

// portsOutsideEphemeral is the range to draw from: below the ephemeral
// range when that leaves room, else above it.
func portsOutsideEphemeral() (lo, hi int) {
	elo, ehi := 32768, 60999 // Linux's default
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var a, z int
		if _, err := fmt.Sscan(string(b), &a, &z); err == nil && a > 0 && z >= a {
			elo, ehi = a, z
		}
	}
	const floor = 10000 // above the well-known and most registered services
	if elo-1-floor >= 2000 {
		return floor, elo - 1
	}
	if 65535-ehi-1 >= 2000 {
		return ehi + 1, 65535
	}
	return floor, 65535 // no room outside it: the listen check is all there is
}
