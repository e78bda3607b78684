package broker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/strait-io/strait/broker/configdef"
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
// remains, so that a small limit still serves clients; what is left is
// divided by the descriptors a connection may hold (two on a plaintext
// listener, three with TLS). A limit of 1024 with 60 descriptors open
// leaves 354 connections; the common 1048576 leaves about 393000.
// max.connections, when set, is honoured exactly; the broker warns when
// it is above the budget.

// minFDReserve is the least the derived limit keeps for the broker itself.
const minFDReserve = 256

// tlsDescriptorsPerConn is what a connection to an SSL listener holds:
// its TCP socket and both ends of the socketpair that relays it to the
// event loops (wire/tls.go). A broker with an SSL listener divides the
// derived budget by it, as any connection may be a TLS one.
const tlsDescriptorsPerConn = 3

// lentDescriptorsPerConn is what a connection to a plaintext listener
// that produces or fetches holds: its TCP socket and the duplicate its
// writer writes the answers on (wire/sendfile.go lends it at the first
// Produce answer or Fetch sent from files). Any connection may become one,
// so the derived budget is divided by it.
const lentDescriptorsPerConn = 2

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

// connectionLimits are the wire server's connection quotas when it
// starts: connectionLimitsFrom the configuration and the dynamic broker
// configs the metadata image holds. It first fixes the max.connections
// the broker uses while none is set: derived from the open-file limit
// (Options.OpenFileLimit; none derived when 0) as the process stands
// before its listeners open, and kept for the broker's life, so that
// deleting a dynamic max.connections brings it back.
func (n *Node) connectionLimits(ctx context.Context) (*wire.ConnectionLimits, error) {
	n.dynamicConfigs.derivedMaxConnections = math.MaxInt32
	budget, open, known := 0, 0, false
	if n.opts.OpenFileLimit > 0 {
		open, known = openDescriptors()
		budget = connectionBudget(n.opts.OpenFileLimit, open)
		perConn := lentDescriptorsPerConn
		if len(n.cfg.TLS) > 0 {
			perConn = tlsDescriptorsPerConn
		}
		budget = max(budget/perConn, 1)
	}
	src := n.sources(n.quorum.Image())
	lim, err := n.connectionLimitsFrom(ctx, src)
	if err != nil {
		return nil, err
	}
	switch _, set := src.BrokerValue("max.connections"); {
	case set:
		if known && lim.MaxConnections > budget {
			n.logger.Warn("max.connections is above what the open-file limit leaves for connections: a storm of connections can take the descriptors the logs need, and a log directory that cannot open a file halts the broker",
				"max.connections", lim.MaxConnections, "budget", budget, "open_file_limit", n.opts.OpenFileLimit, "open_descriptors", open)
		}
	case known:
		n.dynamicConfigs.derivedMaxConnections = budget
		lim.MaxConnections = budget
		n.logger.Info("client connections limited by the open-file limit; set max.connections to choose",
			"max.connections", budget, "open_file_limit", n.opts.OpenFileLimit, "open_descriptors", open,
			"reserved", int(min(n.opts.OpenFileLimit, math.MaxInt32))-open-budget)
	}
	return lim, nil
}

// connectionLimitsFrom reads the connection quota keys from src, the
// static configuration with the dynamic broker configs over it:
// max.connections (n.dynamicConfigs.derivedMaxConnections when nothing sets it),
// max.connections.per.ip, max.connections.per.ip.overrides with their
// host names resolved as Kafka's ConnectionQuotas resolves them (a name
// stands for each of its addresses), and listener.name.<l>.max.connections
// of the listeners serving clients (a dynamic one over the static one;
// others have no effect, as at start-up).
func (n *Node) connectionLimitsFrom(ctx context.Context, src configdef.Sources) (*wire.ConnectionLimits, error) {
	lim := &wire.ConnectionLimits{
		MaxConnections:      n.dynamicConfigs.derivedMaxConnections,
		MaxConnectionsPerIP: int(brokerInt(src, "max.connections.per.ip")),
		InterBrokerListener: n.cfg.InterBrokerListenerName,
	}
	if _, set := src.BrokerValue("max.connections"); set {
		lim.MaxConnections = int(brokerInt(src, "max.connections"))
	}
	served := map[string]bool{}
	for _, l := range n.cfg.Listeners {
		served[l.Name] = !slices.Contains(n.cfg.ControllerListenerNames, l.Name)
	}
	for _, layer := range []map[string]string{src.Static, src.DynamicDefault, src.DynamicBroker} {
		for k, raw := range layer {
			d, listener, ok := configdef.LookupListenerOverride(k)
			if !ok || !served[strings.ToUpper(listener)] {
				continue
			}
			canon, err := d.Normalize(raw)
			if err != nil {
				return nil, err
			}
			v, _ := strconv.Atoi(canon)
			if lim.ListenerMaxConnections == nil {
				lim.ListenerMaxConnections = map[string]int{}
			}
			lim.ListenerMaxConnections[strings.ToUpper(listener)] = v
		}
	}
	raw, _ := src.BrokerValue("max.connections.per.ip.overrides")
	overrides, err := configdef.ParsePerIPOverrides(raw)
	if err != nil {
		return nil, err
	}
	if lim.MaxConnectionsPerIP == 0 && len(overrides) == 0 {
		return nil, errors.New("max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.")
	}
	if len(overrides) > 0 {
		lim.MaxConnectionsPerIPOverrides = make(map[netip.Addr]int)
		for host, max := range overrides {
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

// brokerInt is an Int broker key's value in src (validated when set).
func brokerInt(src configdef.Sources, key string) int64 {
	v, _ := src.BrokerValue(key)
	n, _ := strconv.ParseInt(v, 10, 32)
	return n
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
