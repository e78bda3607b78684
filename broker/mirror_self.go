package broker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/raftmeta"
)

// A mirror whose source is the destination cluster itself (a typo in a
// bootstrap list, a DNS name that moved) would truncate every topic it
// starts, since the source, being the destination, has no last mirrored
// epoch for it, and then copy it from its own empty log (issue 31). KIP-1279
// does not guard against it; Strait refuses such a mirror where it can
// tell: CreateMirror and StartMirrorTopics check the bootstrap servers
// against this cluster's listeners and, when the source answers, its cluster
// id against this cluster's. The mirror manager's source connections check
// the cluster id on every metadata answer too (source.ErrSelfMirror), which
// catches a source that becomes this cluster later.

// selfCheckTimeout bounds the cluster id question CreateMirror asks the
// source: a source that does not answer in time is created anyway (a mirror
// may be created before its source is reachable), and StartMirrorTopics,
// which needs the source, asks again.
const selfCheckTimeout = 5 * time.Second

// listenerLookupTimeout bounds resolving the host names compared.
const listenerLookupTimeout = 2 * time.Second

// checkNotSelf refuses (INVALID_CONFIG) a mirror whose bootstrap servers
// are this cluster's listeners. With ask, it also asks the source for its
// cluster id and refuses this cluster's; a source that cannot be reached is
// not an error here.
func (n *Node) checkNotSelf(ctx context.Context, mirror string, cfgs map[string]string, ask bool) *startError {
	bootstrap := source.BootstrapServers(cfgs)
	if addr, owner, ok := n.ownListener(ctx, bootstrap); ok {
		return &startError{kerr.InvalidConfig.Code, fmt.Sprintf(
			"Cluster mirror '%s': bootstrap server %s is %s of this cluster: a cluster cannot mirror itself.", mirror, addr, owner)}
	}
	if !ask {
		return nil
	}
	src, err := n.mirrorSource(mirror, cfgs, selfCheckTimeout)
	if err != nil {
		return nil // the controller validates the configs and says what is wrong
	}
	defer src.Close()
	cctx, cancel := context.WithTimeout(ctx, selfCheckTimeout)
	defer cancel()
	if _, err := src.ClusterID(cctx); errors.Is(err, source.ErrSelfMirror) {
		return selfMirrorError(mirror, err)
	} else if err != nil {
		n.logger.Info("could not ask a mirror's source for its cluster id; starting its topics asks again",
			"mirror", mirror, "bootstrap.servers", strings.Join(bootstrap, ","), "err", err)
	}
	return nil
}

// selfMirrorError is the answer to a source that said it is this cluster.
func selfMirrorError(mirror string, err error) *startError {
	return &startError{kerr.InvalidConfig.Code, fmt.Sprintf("Cluster mirror '%s': %v.", mirror, err)}
}

// mirrorSource is a short-lived connection to a mirror's source, built from
// its configs as the mirror manager's and checking it is not this cluster.
func (n *Node) mirrorSource(mirror string, cfgs map[string]string, timeout time.Duration) (*source.Cluster, error) {
	opts, err := source.ClientOptions(cfgs, n.opts.Dialer)
	if err != nil {
		return nil, err
	}
	return source.New(source.Config{
		MirrorName:       mirror,
		BootstrapServers: source.BootstrapServers(cfgs),
		ClientOpts:       opts,
		MetadataTimeout:  timeout,
		LocalClusterID:   n.clusterID,
		Logger:           n.logger,
	})
}

// listenerAddr is one address a listener of this cluster answers on.
type listenerAddr struct {
	host  string // "" for a wildcard bind: every local address
	port  int
	owner string // e.g. "the PLAINTEXT listener of broker 2"
}

// ownListener returns the first of bootstrap that reaches a listener of
// this cluster, and which one: the advertised listeners of every
// registered broker and this node's bound listeners. Hosts compare by the
// addresses they resolve to; a wildcard bind matches every address of this
// machine. A host that does not resolve matches only by name.
func (n *Node) ownListener(ctx context.Context, bootstrap []string) (addr, owner string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, listenerLookupTimeout)
	defer cancel()
	own := n.listenerAddrs(n.quorum.Image())
	var local []net.IP // this machine's addresses, for wildcard binds
	for _, b := range bootstrap {
		host, portStr, err := net.SplitHostPort(strings.TrimSpace(b))
		if err != nil {
			continue
		}
		port, err := strconv.Atoi(portStr)
		if err != nil {
			continue
		}
		ips := lookupIPs(ctx, host)
		for _, l := range own {
			if l.port != port {
				continue
			}
			if l.host == "" {
				if local == nil {
					local = localIPs()
				}
				if intersects(ips, local) {
					return b, l.owner, true
				}
				continue
			}
			if strings.EqualFold(l.host, host) || intersects(ips, lookupIPs(ctx, l.host)) {
				return b, l.owner, true
			}
		}
	}
	return "", "", false
}

// listenerAddrs lists this cluster's listeners as img registers them, plus
// this node's bound ones (a wildcard bind as host "").
func (n *Node) listenerAddrs(img *raftmeta.Image) []listenerAddr {
	var out []listenerAddr
	for _, id := range slices.Sorted(maps.Keys(img.Brokers)) {
		for _, ep := range img.Brokers[id].Endpoints {
			out = append(out, listenerAddr{host: ep.Host, port: int(ep.Port),
				owner: fmt.Sprintf("the %s listener of broker %d", ep.Listener, id)})
		}
	}
	for name, a := range n.server.Addrs() {
		host, portStr, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		port, _ := strconv.Atoi(portStr)
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = ""
		}
		out = append(out, listenerAddr{host: host, port: port, owner: fmt.Sprintf("the %s listener of broker %d", name, n.cfg.NodeID)})
	}
	return out
}

// lookupIPs resolves host (an IP literal as itself); nil when it does not
// resolve.
func lookupIPs(ctx context.Context, host string) []net.IP {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil
	}
	out := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.IP)
	}
	return out
}

// localIPs are this machine's interface addresses.
func localIPs() []net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []net.IP
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			out = append(out, ipn.IP)
		}
	}
	return out
}

func intersects(a, b []net.IP) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Equal(y) {
				return true
			}
		}
	}
	return false
}
