package broker

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"

	"github.com/strait-io/strait/wire"
)

// Every connection a listener accepts takes a descriptor, and so does
// every segment file, index, checkpoint and raft file the broker opens.
// Storage treats a failed open (EMFILE) as a failed log directory and
// halts the node, so a storm of connections that used up the open-file
// limit would stop the broker through its storage even though its
// listener survives it (wire/accept.go). Kafka leaves max.connections at
// Int.MaxValue and the descriptors to the operator. When max.connections
// is not set, Strait derives one from the open-file limit instead, so a
// storm is held back in the listen backlog before the process runs out:
// the descriptors open when the listeners start (the log directory, the
// metadata quorum, the event loops) stay out of the budget, and so does
// a reserve for what the broker opens later (new segments and
// partitions, connections to other brokers and to mirror sources):
// max(256, a quarter of the limit), but never more than half of what
// remains, so that a small limit still serves clients. A limit of 1024
// with 60 descriptors open leaves 708 connections; the common 1048576
// leaves about 786000. max.connections, when set, is honoured exactly;
// the broker warns when it is above the budget.

// minFDReserve is the least the derived limit keeps for the broker itself.
const minFDReserve = 256

// tlsDescriptorsPerConn is what a connection to an SSL listener holds:
// its TCP socket and both ends of the socketpair that relays it to the
// event loops (wire/tls.go). A broker with an SSL listener divides the
// derived budget by it, as any connection may be a TLS one.
const tlsDescriptorsPerConn = 3

// connectionBudget is the client connections a process whose soft
// open-file limit is limit and which has open descriptors open may hold
// while keeping the reserve.
func connectionBudget(limit uint64, open int) int {
	free := int(min(limit, math.MaxInt32)) - open
	reserve := max(minFDReserve, int(min(limit, math.MaxInt32)/4))
	return max(free-reserve, free/2, 1)
}

// openDescriptors counts the process's open descriptors, when the system
// lists them.
func openDescriptors() (int, bool) {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if ents, err := os.ReadDir(dir); err == nil {
			return len(ents) - 1, true // less the directory's own, open while it is read
		}
	}
	return 0, false
}

// connectionLimits are the wire server's connection quotas from the
// configuration, with max.connections derived from the open-file limit
// when it is not set (Options.OpenFileLimit; none derived when 0), and
// the per-address overrides' host names resolved as Kafka's
// ConnectionQuotas resolves them when the broker starts; a name stands
// for each of its addresses.
func (n *Node) connectionLimits(ctx context.Context) (*wire.ConnectionLimits, error) {
	cfg := n.cfg
	lim := &wire.ConnectionLimits{
		MaxConnections:      math.MaxInt32,
		MaxConnectionsPerIP: int(cfg.MaxConnectionsPerIP),
		InterBrokerListener: cfg.InterBrokerListenerName,
	}
	budget, open, known := 0, 0, false
	if n.opts.OpenFileLimit > 0 {
		open, known = openDescriptors()
		budget = connectionBudget(n.opts.OpenFileLimit, open)
		if len(n.cfg.TLS) > 0 {
			budget = max(budget/tlsDescriptorsPerConn, 1)
		}
	}
	switch {
	case cfg.MaxConnections >= 0:
		lim.MaxConnections = int(cfg.MaxConnections)
		if known && lim.MaxConnections > budget {
			n.logger.Warn("max.connections is above what the open-file limit leaves for connections: a storm of connections can take the descriptors the logs need, and a log directory that cannot open a file halts the broker",
				"max.connections", lim.MaxConnections, "budget", budget, "open_file_limit", n.opts.OpenFileLimit, "open_descriptors", open)
		}
	case known:
		lim.MaxConnections = budget
		n.logger.Info("client connections limited by the open-file limit; set max.connections to choose",
			"max.connections", budget, "open_file_limit", n.opts.OpenFileLimit, "open_descriptors", open,
			"reserved", int(min(n.opts.OpenFileLimit, math.MaxInt32))-open-budget)
	}
	if len(cfg.ListenerMaxConnections) > 0 {
		lim.ListenerMaxConnections = make(map[string]int, len(cfg.ListenerMaxConnections))
		for l, max := range cfg.ListenerMaxConnections {
			lim.ListenerMaxConnections[l] = int(max)
		}
	}
	if len(cfg.MaxConnectionsPerIPOverrides) > 0 {
		lim.MaxConnectionsPerIPOverrides = make(map[netip.Addr]int)
		for host, max := range cfg.MaxConnectionsPerIPOverrides {
			addrs, err := resolveHost(ctx, host)
			if err != nil {
				return nil, fmt.Errorf("max.connections.per.ip.overrides: %w", err)
			}
			for _, a := range addrs {
				lim.MaxConnectionsPerIPOverrides[a] = int(max)
			}
		}
	}
	return lim, nil
}

// resolveHost returns host's addresses, host itself when it is one,
// without IPv6 zones (the quotas count clients without them).
func resolveHost(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap().WithZone("")}, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap().WithZone("")
	}
	return addrs, nil
}
