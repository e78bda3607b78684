package broker

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/replication/fetcher"
)

// peers is the broker's client for the RPCs it sends to the other brokers
// of its cluster: the mirror's ReadMirrorStates / WriteMirrorStates to the
// coordinator of a record, DescribeMirrors with LocalOnly to each broker
// and SyncMirrorGroupOffsets to the mirror's syncer; the transaction
// coordinator's WriteTxnMarkers and AddPartitionsToTxn; the share
// coordinator's state RPCs; ListOffsets.
// Franz-go clients, bootstrapped from this broker's own inter-broker
// listener: they learn the others' addresses from Metadata and reach a
// broker by id (Client.Broker). Created on first use.
//
// One client per lane (peerLane), as Kafka's brokers keep a NetworkClient
// per inter-broker channel (TransactionMarkerChannelManager,
// AddPartitionsToTxnManager, the share persister...): a connection answers
// in order, so a write that waits for its ISR's acks (a WriteMirrorStates
// or WriteTxnMarkers while a replica is dead, up to request.timeout.ms)
// must not hold a describe or a marker of another concern behind it.
type peers struct {
	nodeID int32
	// seed is this broker's inter-broker address; opts the inter-broker
	// link's dialer and login (TLS, SASL).
	seed   func() (string, error)
	opts   func() []kgo.Opt
	logger *slog.Logger

	mu      sync.Mutex
	clients map[peerLane]*kgo.Client
	closed  bool
}

// peerLane names one of the peers' clients.
type peerLane string

const (
	laneDefault        peerLane = "default"
	laneMirrorState    peerLane = "mirror-state"
	laneMirrorDescribe peerLane = "mirror-describe"
	laneMirrorSync     peerLane = "mirror-sync"
	laneTxnMarkers     peerLane = "txn-markers"
	laneTxnVerify      peerLane = "txn-verify"
	laneShareState     peerLane = "share-state"
)

// laneOf is the lane a request to another broker travels on.
func laneOf(req kmsg.Request) peerLane {
	switch req.(type) {
	case *kmsg.WriteTxnMarkersRequest:
		return laneTxnMarkers
	case *kmsg.AddPartitionsToTxnRequest:
		return laneTxnVerify
	case *kmsg.InitializeShareGroupStateRequest, *kmsg.ReadShareGroupStateRequest,
		*kmsg.WriteShareGroupStateRequest, *kmsg.DeleteShareGroupStateRequest,
		*kmsg.ReadShareGroupStateSummaryRequest:
		return laneShareState
	}
	switch req.Key() {
	case mirrormsg.KeyReadMirrorStates, mirrormsg.KeyWriteMirrorStates:
		return laneMirrorState
	case mirrormsg.KeyDescribeMirrors:
		return laneMirrorDescribe
	case mirrormsg.KeySyncMirrorGroupOffsets:
		// A round waits on the source, up to --offset-sync-timeout.
		return laneMirrorSync
	}
	return laneDefault
}

// request sends req to broker id on its lane and returns its answer.
func (p *peers) request(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	cl, err := p.laneClient(laneOf(req))
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

// client is the default lane's client, for callers that use franz-go's
// own request routing.
func (p *peers) client() (*kgo.Client, error) { return p.laneClient(laneDefault) }

func (p *peers) laneClient(lane peerLane) (*kgo.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("broker %d is stopping", p.nodeID)
	}
	if cl := p.clients[lane]; cl != nil {
		return cl, nil
	}
	seed, err := p.seed()
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seed),
		kgo.ClientID(fmt.Sprintf("strait-broker-%d-%s", p.nodeID, lane)),
		kgo.MaxVersions(mirrormsg.MaxVersions(nil)),
		kgo.WithLogger(fetcher.KgoLogger(p.logger.With("lane", string(lane)))),
	}
	opts = append(opts, p.opts()...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("inter-broker client (%s): %w", lane, err)
	}
	if p.clients == nil {
		p.clients = make(map[peerLane]*kgo.Client)
	}
	p.clients[lane] = cl
	return cl, nil
}

// close closes the clients; requests fail from then on.
func (p *peers) close() {
	p.mu.Lock()
	clients := p.clients
	p.clients, p.closed = nil, true
	p.mu.Unlock()
	for _, cl := range clients {
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
