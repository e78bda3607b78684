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
// picked, so no port comes back twice, and each is leased to this test
// (portLease) until it ends, so no other test process draws it meanwhile.
//
// The ports are drawn below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), never from it: a port the kernel hands
// to "127.0.0.1:0" may next be handed to an outgoing connection as its
// local port, and a node that binds it after that (at start, or after a
// restart) fails with "address already in use" (seen in the e2e tests of
// restarts, under load).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, leases, err := freePorts(n)
	if err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	t.Cleanup(func() { releaseAll(leases) })
	return ports
}

// freePorts draws n ports, each leased to this process (portLease) and
// free of listeners when drawn.
func freePorts(n int) ([]int, []*portLease, error) {
	lo, hi := portsOutsideEphemeral()
	ports := make([]int, 0, n)
	leases := make([]*portLease, 0, n)
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for tries := 0; len(ports) < n; tries++ {
		if tries > 100*n+1000 {
			releaseAll(leases)
			return nil, nil, fmt.Errorf("no free loopback port in [%d, %d] after %d tries", lo, hi, tries)
		}
		p := lo + rand.IntN(hi-lo+1)
		lease, ok, err := leasePort(p) // also refuses a port drawn earlier in this call
		if err != nil {
			releaseAll(leases)
			return nil, nil, err
		}
		if !ok {
			continue // another test process's, or this one's: draw again
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			lease.release()
			continue // in use: draw again
		}
		lns = append(lns, ln)
		leases = append(leases, lease)
		ports = append(ports, p)
	}
	return ports, leases, nil
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
