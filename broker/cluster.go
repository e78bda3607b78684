package broker

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/ctrlrpc"
	"github.com/strait-io/strait/wire"
)

// forwardTimeout bounds how long a request waits for an active controller
// when the client set no timeout (Kafka's request.timeout.ms default).
const forwardTimeout = 30 * time.Second

// controlledShutdownTimeout bounds the controlled shutdown within Stop:
// the broker promises to exit within 5 s of SIGTERM.
const controlledShutdownTimeout = 3 * time.Second

// forward sends a controller request to the active controller (Kafka's
// ForwardingManager; no Envelope until authentication exists): served in
// process when this node is the active controller, else over the
// controller channel. When no controller answers in time, the local
// controller answers instead: not being the active controller, it answers
// NOT_CONTROLLER for every entity, which clients retry.
//
// Every attempt carries the same ForwardID: a retry of a write that did
// commit (its answer lost with the connection, or with the controller's
// leadership) gets the first answer back instead of being applied again.
func (n *Node) forward(ctx context.Context, req kmsg.Request) kmsg.Response {
	ctx = ctrlrpc.WithForwardID(ctx, n.forwardIDs.Next())
	ctrl := n.quorum.Controller()
	if n.quorum.IsLeader() {
		// NOT_CONTROLLER here means leadership moved while the write
		// was under way, and it may still commit: the channel asks the
		// next controller with the same id rather than the client
		// asking again with a new one.
		if resp, err := ctrl.ServeControllerRequest(ctx, req); err == nil && !ctrlrpc.HasErrorCode(resp, kerr.NotController.Code) {
			return resp
		}
	}
	sctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	if resp, err := n.ctrlClient.Send(sctx, req); err == nil {
		return resp
	} else {
		n.logger.Warn("no active controller answered a forwarded request", "request", wire.NameForKey(req.Key()), "err", err)
	}
	resp, err := ctrl.ServeControllerRequest(ctx, req)
	if err != nil {
		// Unreachable: only controller requests are forwarded.
		n.logger.Error("forwarding a request the controller does not serve", "request", wire.NameForKey(req.Key()), "err", err)
		return req.ResponseKind()
	}
	return resp
}

// randomSession is a ForwardIDs session: random, so a restarted broker
// never repeats an id of its previous process.
func randomSession() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return binary.BigEndian.Uint64(b[:])
}

// waitForTopics waits until this node's metadata image holds the named
// topics, so a request right after a forwarded CreateTopics finds them
// here as it would on the controller. It gives up quietly when ctx ends
// or after forwardTimeout: the topics then show up a little later.
func (n *Node) waitForTopics(ctx context.Context, names []string) {
	n.waitForImage(ctx, func(img *raftmeta.Image) bool {
		for _, name := range names {
			if _, ok := img.Topics[name]; !ok {
				return false
			}
		}
		return true
	})
}

// waitForImage waits until this node's image satisfies done, giving up
// quietly when ctx ends or after forwardTimeout.
func (n *Node) waitForImage(ctx context.Context, done func(*raftmeta.Image) bool) {
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !done(n.quorum.Image()) {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// brokerEpoch is this broker's epoch from its registration (-1 before).
func (n *Node) brokerEpoch() int64 {
	if lc := n.lifecycle.Load(); lc != nil {
		return lc.Epoch()
	}
	return -1
}

// advertisedEndpoints are the advertised listeners with the ports actually
// bound: ports advertised as 0 take the bound port (tests listen on port
// 0), and an empty host the machine's name, as Kafka does.
func (n *Node) advertisedEndpoints() []raftmeta.Endpoint {
	bound := n.server.Addrs()
	var out []raftmeta.Endpoint
	for _, ep := range n.cfg.AdvertisedListeners {
		host, port := ep.Host, ep.Port
		if addr, ok := bound[ep.Name]; ok {
			h, p, err := net.SplitHostPort(addr)
			if err == nil {
				if port == 0 {
					port, _ = strconv.Atoi(p)
				}
				if host == "" && h != "0.0.0.0" && h != "::" {
					host = h
				}
			}
		}
		if host == "" {
			if hn, err := os.Hostname(); err == nil {
				host = hn
			}
		}
		out = append(out, raftmeta.Endpoint{
			Listener: ep.Name, SecurityProtocol: string(ep.SecurityProtocol), Host: host, Port: int32(port),
		})
	}
	return out
}

// joinCluster registers the broker with the active controller and
// heartbeats from then on (Kafka's BrokerLifecycleManager), waits for the
// metadata to catch up (a non-voter is added to raft when it registers)
// and for the controller to unfence the broker: only then may it lead
// partitions and join ISRs, and only then is it ready.
func (n *Node) joinCluster(ctx context.Context) error {
	cfg := n.cfg
	lc := raftmeta.NewBrokerLifecycle(raftmeta.BrokerLifecycleConfig{
		NodeID:                 cfg.NodeID,
		ClusterID:              n.clusterID,
		Endpoints:              n.advertisedEndpoints(),
		ControllerAddr:         n.quorum.Addr(),
		ControllerListenerName: controllerListenerName(cfg),
		Rack:                   cfg.BrokerRack,
		LogDirs:                n.logDirIDs(),
		Channel:                n.ctrlClient,
		MetadataOffset:         func() int64 { return int64(n.quorum.Image().Offset) },
		HeartbeatInterval:      time.Duration(cfg.Cluster.BrokerHeartbeatIntervalMs) * time.Millisecond,
		Logger:                 n.logger.With("component", "broker-lifecycle"),
	})
	n.lifecycle.Store(lc)
	if err := lc.Start(ctx); err != nil {
		return fmt.Errorf("registering broker %d: %w", cfg.NodeID, err)
	}
	if err := n.quorum.WaitReady(ctx); err != nil {
		return fmt.Errorf("waiting for the metadata quorum: %w", err)
	}
	if err := lc.WaitUnfenced(ctx); err != nil {
		return err
	}
	// Unfenced: the image holds the log up to this broker's registration
	// (a re-registration fences the broker, so it leads nothing before
	// this): the replicas take it, and a log whose topic it lacks is stray.
	img := n.loadReplicas()
	n.replicas.WarnStrayLogs(img)
	return nil
}

// loadReplicas gives the replica manager its first image, the whole of
// the current one, which it returns; from then on it takes every delta
// (startReplicas).
func (n *Node) loadReplicas() *raftmeta.Image {
	n.replicasLoaded.Store(true)
	img := n.quorum.Image()
	n.replicas.ApplyDelta(&raftmeta.Delta{}, img)
	return img
}

// leaveCluster asks the controller to move this broker's leaderships to
// other in-sync replicas before it stops serving (controlled shutdown,
// when controlled.shutdown.enable), bounded so Stop still ends in time.
func (n *Node) leaveCluster(ctx context.Context) {
	lc := n.lifecycle.Load()
	if lc == nil || !n.cfg.Cluster.ControlledShutdownEnable {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, controlledShutdownTimeout)
	defer cancel()
	if err := lc.ControlledShutdown(ctx); err != nil {
		n.logger.Warn("controlled shutdown did not finish; stopping anyway", "err", err)
	}
}

// controllerListenerName is the first of controller.listener.names, under
// which the broker registers its CONTROLLER address.
func controllerListenerName(cfg *config.Config) string {
	if len(cfg.ControllerListenerNames) > 0 {
		return cfg.ControllerListenerNames[0]
	}
	return "CONTROLLER"
}

// handOverController moves the active controller's role to another voter
// before this one closes, so the quorum elects at once instead of after
// an election timeout.
func (n *Node) handOverController(ctx context.Context) {
	if !n.quorum.IsLeader() || len(n.cfg.QuorumVoters) < 2 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := n.quorum.TransferLeadership(ctx); err != nil {
		n.logger.Warn("could not hand the controller over to another voter", "err", err)
	}
}

// staticBool is a boolean key of the static configuration.
func (n *Node) staticBool(key string) bool {
	v, _ := n.cfg.Sources(nil, nil).BrokerValue(key)
	return v == "true"
}
