package broker

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/strait-io/strait/wire/tlsconf"
)

// dialFunc is net.Dialer.DialContext's shape, which every inter-node
// client takes (kclient, ctrlrpc, kgo.Dialer).
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// interBrokerDialer dials other brokers' inter-broker listener: the
// follower fetchers and the intra-cluster kgo clients. Over TLS with this
// broker's keystore and truststore when that listener is SSL, as Kafka's
// inter-broker clients take the listener's SslFactory in client mode.
func (n *Node) interBrokerDialer() dialFunc {
	return n.listenerDialer(n.cfg.InterBrokerListenerName)
}

// controllerDialer dials the controllers' listener: raft and the
// controller channel.
func (n *Node) controllerDialer() dialFunc {
	return n.listenerDialer(controllerListenerName(n.cfg))
}

// controllerListenerWrapper serves the controller listener over TLS when
// it is SSL (nil otherwise). The handshake runs on the first read, which
// ctrlrpc's classify bounds with its deadline.
func (n *Node) controllerListenerWrapper() func(net.Listener) net.Listener {
	t := n.cfg.TLS[controllerListenerName(n.cfg)]
	if t == nil {
		return nil
	}
	return func(ln net.Listener) net.Listener { return tls.NewListener(ln, t.Server) }
}

// listenerDialer dials listener as its security protocol needs: the
// node's dialer (Options.Dialer, nil meaning a net.Dialer) for
// PLAINTEXT, and a TLS client over it for SSL, verifying the host name
// when ssl.endpoint.identification.algorithm is https.
func (n *Node) listenerDialer(listener string) dialFunc {
	base := n.opts.Dialer
	t := n.cfg.TLS[listener]
	if t == nil {
		return base
	}
	if base == nil {
		var d net.Dialer
		base = d.DialContext
	}
	return tlsconf.DialOver(base, t.Client)
}
