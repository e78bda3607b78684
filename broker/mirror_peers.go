package broker

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/replication/fetcher"
)

// peers is the broker's client for the mirror RPCs it sends to the other
// brokers of its cluster (ReadMirrorStates and WriteMirrorStates to the
// coordinator of a record, DescribeMirrors with LocalOnly to each broker),
// as Kafka's brokers keep a NetworkClient per inter-broker channel. One
// franz-go client, bootstrapped from this broker's own inter-broker
// listener: it learns the others' addresses from Metadata and reaches a
// broker by id (Client.Broker). Created on first use.
type peers struct {
	n *Node

	mu     sync.Mutex
	cl     *kgo.Client
	closed bool
}

// request sends req to broker id and returns its answer.
func (p *peers) request(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	cl, err := p.client()
	if err != nil {
		return nil, err
	}
	resp, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		// The broker may have moved (restarted on another address) or
		// left: look the brokers up again before the next request.
		cl.ForceMetadataRefresh()
		return nil, fmt.Errorf("%s to broker %d: %w", kmsg.NameForKey(req.Key()), id, err)
	}
	return resp, nil
}

func (p *peers) client() (*kgo.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("broker %d is stopping", p.n.cfg.NodeID)
	}
	if p.cl != nil {
		return p.cl, nil
	}
	seed, err := p.n.interBrokerAddr()
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seed),
		kgo.ClientID(fmt.Sprintf("strait-broker-%d", p.n.cfg.NodeID)),
		kgo.MaxVersions(mirrormsg.MaxVersions(nil)),
		kgo.WithLogger(fetcher.KgoLogger(p.n.logger.With("component", "mirror-peers"))),
	}
	opts = append(opts, p.n.interBrokerClientOpts()...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("inter-broker mirror client: %w", err)
	}
	p.cl = cl
	return cl, nil
}

// close closes the client; requests fail from then on.
func (p *peers) close() {
	p.mu.Lock()
	cl := p.cl
	p.cl, p.closed = nil, true
	p.mu.Unlock()
	if cl != nil {
		cl.Close()
	}
}

// interBrokerAddr is this broker's advertised inter-broker listener.
func (n *Node) interBrokerAddr() (string, error) {
	for _, ep := range n.advertisedEndpoints() {
		if ep.Listener == n.cfg.InterBrokerListenerName {
			return net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))), nil
		}
	}
	return "", fmt.Errorf("no advertised listener named %s (inter.broker.listener.name)", n.cfg.InterBrokerListenerName)
}
