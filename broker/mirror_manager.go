package broker

import (
	"time"

	"github.com/strait-io/strait/mirror/manager"
	"github.com/strait-io/strait/mirror/partition"
)

// startMirrors hosts the broker's side of cluster mirroring (KIP-1279):
// the __mirror_state coordinator and the MirrorMetadataManager, which
// drives the mirror partitions this node leads. The manager reconciles
// every image the metadata subscription applies (OnMetadata after
// ReplicaManager.ApplyDelta); it starts working once the broker joined
// the cluster (startMirrorManager), since it writes to __mirror_state and
// asks the controller as this registered broker.
func (n *Node) startMirrors() error {
	if err := n.startMirrorStates(); err != nil {
		return err
	}
	n.deltaMirrorStates.Store(n.mirrorStates)
	m, err := manager.New(n.mirrorManagerConfig())
	if err != nil {
		return err
	}
	n.mirrorMgr.Store(m)
	return nil
}

// mirrorManagerConfig maps the broker configs to the manager's: the
// FAILED retries from mirror.failed.retry.*, the fetch sizes and backoff
// from the followers' replica.fetch.* (digest §5.2 has no mirror fetch
// sizes of its own).
func (n *Node) mirrorManagerConfig() manager.Config {
	cfg := n.cfg
	attempts := cfg.Mirror.FailedRetryMaxAttempts
	if attempts == 0 {
		attempts = partition.NoAutomaticRetries
	}
	return manager.Config{
		SourceDialer: n.opts.Dialer,
		NodeID:       cfg.NodeID,
		ClusterID:    n.clusterID,
		Image:        n.quorum.Image,
		Destination:  mirrorDestination{n.replicas},
		States:       mirrorStateStore{n},
		Controller:   mirrorController{n},
		Retry: partition.Config{
			RetryInitialBackoff: time.Duration(cfg.Mirror.FailedRetryInitialBackoffMs) * time.Millisecond,
			RetryMaxBackoff:     time.Duration(cfg.Mirror.FailedRetryMaxBackoffMs) * time.Millisecond,
			RetryMaxAttempts:    attempts,
		},
		FetchBackoff:           time.Duration(cfg.Cluster.ReplicaFetchBackoffMs) * time.Millisecond,
		FetchMaxWaitMs:         cfg.Cluster.ReplicaFetchWaitMaxMs,
		FetchMinBytes:          cfg.Cluster.ReplicaFetchMinBytes,
		FetchMaxBytes:          cfg.Cluster.ReplicaFetchResponseMaxBytes,
		FetchPartitionMaxBytes: cfg.Cluster.ReplicaFetchMaxBytes,
		Clock:                  n.clock,
		Logger:                 n.logger,
		Seed:                   time.Now().UnixNano(),
	}
}

// startMirrorManager starts the manager's work; see startMirrors.
func (n *Node) startMirrorManager() {
	if m := n.mirrorMgr.Load(); m != nil {
		m.Start(n.bgCtx)
	}
	n.syncers.start()
}

// mirrorManager is the node's manager (nil before startMirrors).
func (n *Node) mirrorManager() *manager.Manager { return n.mirrorMgr.Load() }

// stopMirrors stops the manager (its fetchers write to the replica
// manager, so before it stops), the coordinator, the background deletions
// and the inter-broker client.
func (n *Node) stopMirrors() {
	n.syncers.close()
	if m := n.mirrorMgr.Load(); m != nil {
		m.Close()
	}
	n.bgCancel()
	n.bg.Wait()
	if n.mirrorStates != nil {
		n.mirrorStates.Close()
	}
	n.peers.close()
}
