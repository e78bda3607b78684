package broker

import (
	"time"

	replshare "github.com/strait-io/strait/replication/share"
	"github.com/strait-io/strait/storage"
)

// startSharePartitions starts the share partition manager: the partition
// leader's side of KIP-932 share groups, serving ShareFetch and
// ShareAcknowledge from the local leaders' logs (share_logs.go), storing
// share partition state through Options.SharePersister.
//
// The group.share.* broker configs set the record locks, the delivery
// count limit and the in-flight records per share partition;
// fetch.max.bytes caps a ShareFetch as it caps a Fetch. A group's own
// share.auto.offset.reset, share.isolation.level and
// share.record.lock.duration.ms come from its GROUP configs
// (group_configs.go).
func (n *Node) startSharePartitions() {
	if n.opts.SharePersister == nil {
		return
	}
	sg := n.cfg.ShareGroup
	cfg := replshare.Config{
		RecordLockDuration: time.Duration(sg.RecordLockDurationMs) * time.Millisecond,
		DeliveryCountLimit: int16(sg.DeliveryCountLimit),
		MaxRecordLocks:     int64(sg.PartitionMaxRecordLocks),
		FetchMaxBytes:      n.cfg.FetchMaxBytes,
		PersisterTimeout:   time.Duration(n.cfg.Share.WriteTimeoutMs) * time.Millisecond,
	}
	n.sharePartitions = replshare.NewManager(cfg,
		shareLogs{rm: n.replicas, image: n.quorum.Image}, n.opts.SharePersister, n.groupConfigs(),
		n.clock, n.logger.With("component", "share-partitions"))
	// A share partition whose leadership moved or whose leader epoch
	// changed is dropped (Kafka's SharePartitionListener); the call only
	// signals, as a leadership listener must not block.
	n.replicas.OnLeadershipChange(func(storage.TopicPartition, bool, int32) { n.sharePartitions.LeadershipChanged() })
}
