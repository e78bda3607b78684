package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/replication"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/vfs"
)

const dataDir = "/data"

// node is one broker: its filesystem survives crashes (whole for a
// process kill, synced data only for a power loss); everything else is
// rebuilt on restart.
type node struct {
	c  *Cluster
	id int32
	fs *vfs.MemFS

	up bool
	// incarnation counts restarts; messages addressed to an earlier one
	// are lost with its connections.
	incarnation int
	// brokerEpoch is the registration epoch of this incarnation, 0 before
	// it registered.
	brokerEpoch int64
	logs        *storage.LogManager
	rm          *replication.ReplicaManager
	// applied is the metadata image the node last applied; nil until a
	// restarted node first catches up (it serves nothing before).
	applied *raftmeta.Image
	// tasks are the AlterPartition sends the replica manager scheduled.
	tasks   []func()
	drivers map[*fetcher.Fetcher]*driver

	// damaged: lost unsynced data in a power loss and not back in the ISR.
	damaged bool
	// lastHW is the high watermark at the last check of this incarnation
	// (-1 before); verified is how far its log was checked against the
	// committed log.
	lastHW   int64
	lastLEO  int64
	verified int64
}

// taskQueue is the replica manager's Scheduler: tasks wait for the
// simulation to run them.
type taskQueue struct{ n *node }

func (q taskQueue) Go(f func()) { q.n.tasks = append(q.n.tasks, f) }

// controllerChannel carries a node's AlterPartition to the controller,
// subject to the node-controller link and drops; a lost answer is an
// error though the controller applied the change.
type controllerChannel struct {
	n           *node
	incarnation int
}

var errUnreachable = errors.New("sim: controller unreachable")

func (ch controllerChannel) AlterPartition(_ context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error) {
	n, c := ch.n, ch.n.c
	if !n.up || n.incarnation != ch.incarnation || !c.net.connected(n.id, controllerID) || c.lose() {
		c.tracef("node %d: AlterPartition lost", n.id)
		return nil, errUnreachable
	}
	resp := c.ctrl.alterPartition(req)
	if c.lose() {
		c.tracef("node %d: AlterPartition answer lost", n.id)
		return nil, errUnreachable
	}
	return resp, nil
}

// start opens the node's logs and a replica manager; the node registers
// and loads metadata when it next reaches the controller.
func (n *node) start() error {
	c := n.c
	logs, err := storage.OpenManager(dataDir, storage.ManagerOptions{FS: n.fs, Clock: c.clock, Logger: c.logger,
		Scheduler: storage.InlineScheduler{}, DefaultConfig: storage.DefaultLogConfig()})
	if err != nil {
		return fmt.Errorf("node %d: open logs: %w", n.id, err)
	}
	n.incarnation++
	inc := n.incarnation
	rm, err := replication.NewReplicaManager(replication.Config{
		NodeID:                       n.id,
		Logs:                         logs,
		Clock:                        c.clock,
		Logger:                       c.logger.With("node", n.id),
		MinInsyncReplicasFor:         func(string, *raftmeta.Image) int32 { return c.opts.MinISR },
		ControllerChannel:            controllerChannel{n, inc},
		BrokerEpoch:                  func() int64 { return n.brokerEpoch },
		Scheduler:                    taskQueue{n},
		ReplicaLagTimeMaxMs:          replicaLagMs,
		AlterPartitionRetryBackoffMs: -1,
		NoTruncationOnFetch:          c.noTruncationOnFetch,
		NewLeaderEndPoint: func(leader fetcher.BrokerEndPoint) (fetcher.LeaderEndPoint, error) {
			return &fetcher.KafkaEndPoint{Leader: leader, ReplicaID: n.id, BrokerEpoch: func() int64 { return n.brokerEpoch },
				MaxBytes: 1 << 20, PartitionMaxBytes: fetchMaxBytes, NoTruncationOnFetch: c.noTruncationOnFetch}, nil
		},
	})
	if err != nil {
		return err
	}
	n.logs, n.rm, n.up = logs, rm, true
	n.brokerEpoch, n.applied, n.tasks = 0, nil, nil
	n.drivers = map[*fetcher.Fetcher]*driver{}
	n.lastHW, n.lastLEO, n.verified = -1, -1, 0
	return nil
}

// crash kills the node. A power loss keeps only what was synced (and a
// random part of the rest, as disks do).
func (n *node) crash(powerLoss bool) {
	n.up = false
	n.rm.Stop()
	// The LogManager is abandoned, not closed: no clean shutdown marker,
	// no final checkpoint.
	n.logs, n.rm, n.tasks, n.drivers = nil, nil, nil, nil
	if powerLoss {
		n.fs = n.fs.CrashClone(vfs.CrashOptions{Rand: n.c.rng})
		n.damaged = true
	}
}

// partition is the node's replica of the partition, if loaded.
func (n *node) partition() (*replication.Partition, bool) {
	if !n.up {
		return nil, false
	}
	return n.rm.Partition(tp)
}

// catchUp applies the controller's newest image (the broker's metadata
// fetch), with the delta from the one it has.
func (n *node) catchUp() {
	latest := n.c.ctrl.img
	if n.applied != nil && n.applied.Offset >= latest.Offset {
		return
	}
	d := &raftmeta.Delta{}
	if n.applied != nil {
		if old, ok := n.applied.Topics[topicName]; !ok || old.Partitions[0] != latest.Topics[topicName].Partitions[0] {
			d.ChangedPartitions = append(d.ChangedPartitions, latest.Topics[topicName].Partitions[0])
		}
		for _, id := range n.c.ids() {
			if n.applied.Brokers[id] != latest.Brokers[id] {
				d.ChangedBrokers = append(d.ChangedBrokers, id)
			}
		}
	}
	n.applied = latest
	n.rm.ApplyDelta(d, latest)
	p := latest.Topics[topicName].Partitions[0]
	n.c.tracef("node %d: applied metadata %d: leader %d epoch %d isr %v", n.id, latest.Offset, p.Leader, p.LeaderEpoch, p.ISR)
}

// syncDrivers pairs each of the replica manager's fetchers with a driver.
func (n *node) syncDrivers() []*driver {
	fs := n.rm.FetcherManager().Fetchers()
	for f := range n.drivers {
		if !slices.Contains(fs, f) {
			delete(n.drivers, f)
		}
	}
	out := make([]*driver, 0, len(fs))
	for _, f := range fs {
		d, ok := n.drivers[f]
		if !ok {
			d = &driver{n: n, incarnation: n.incarnation, f: f, ep: f.EndPoint().(*fetcher.KafkaEndPoint)}
			n.drivers[f] = d
		}
		out = append(out, d)
	}
	return out
}
