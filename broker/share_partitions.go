package broker

import (
	replshare "github.com/strait-io/strait/replication/share"
	"github.com/strait-io/strait/storage"
)

// startSharePartitions starts the share partition manager when the node has a
// persister for share partition state (Options.SharePersister): the
// partition leader's side of KIP-932 share groups, serving ShareFetch and
// ShareAcknowledge from the local leaders' logs (share_logs.go).
//
// The group.share.* broker configs are not parsed yet: the manager takes
// Kafka's defaults (30 s record locks, 5 deliveries, 2000 in-flight
// records per share partition, 2000 share sessions), with fetch.max.bytes
// capping a ShareFetch as it caps a Fetch. No group has share.* group
// configs yet either: every group starts at the latest offset, reads
// uncommitted.
func (n *Node) startSharePartitions() {
	if n.opts.SharePersister == nil {
		return
	}
	n.sharePartitions = replshare.NewManager(replshare.Config{FetchMaxBytes: n.cfg.FetchMaxBytes},
		shareLogs{rm: n.replicas, image: n.quorum.Image}, n.opts.SharePersister, nil,
		n.clock, n.logger.With("component", "share-partitions"))
	// A share partition whose leadership moved or whose leader epoch
	// changed is dropped (Kafka's SharePartitionListener); the call only
	// signals, as a leadership listener must not block.
	n.replicas.OnLeadershipChange(func(storage.TopicPartition, bool, int32) { n.sharePartitions.LeadershipChanged() })
}
