package replication

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// partitionChange is a partition and the state a delta gives it.
type partitionChange struct {
	p  *Partition
	pp *raftmeta.Partition
}

// applyRoles moves the changed partitions to their new roles (Kafka's
// applyLocalLeadersDelta and applyLocalFollowersDelta). Fetchers of
// partitions about to lead, or to follow in a new epoch, stop first, so
// no fetcher appends to a log that leads; followers in a new epoch are
// returned to start fetching from their leader once the partitions are
// published. onLeadership hears of every leadership change.
func (r *ReplicaManager) applyRoles(changes []partitionChange, img *raftmeta.Image, onLeadership func(*Partition)) map[storage.TopicPartition]fetcher.InitialFetchState {
	var stop []storage.TopicPartition
	for _, c := range changes {
		st := c.p.state.Load()
		if c.pp.PartitionEpoch < st.partitionEpoch {
			continue
		}
		if c.pp.Leader == r.nodeID || c.pp.LeaderEpoch > st.leaderEpoch {
			stop = append(stop, c.p.tp)
		}
	}
	r.fetchers.RemoveFetcherForPartitions(stop)
	start := map[storage.TopicPartition]fetcher.InitialFetchState{}
	now := r.nowMs()
	for _, c := range changes {
		rc := c.p.applyState(c.pp, r.cfg.MinInsyncReplicasFor(c.pp.Topic, img), now)
		if rc.leadership {
			onLeadership(c.p)
		}
		if rc.newFollowerEpoch {
			if in, ok := r.initialFetchState(c.p, img); ok {
				start[c.p.tp] = in
			}
		}
	}
	return start
}

// refollowChangedBrokers hands followers of a broker whose registration
// changed (a restart, maybe on a new port) to the fetcher again: the
// fetcher manager reconnects when the endpoint moved and keeps the fetch
// state otherwise; a follower whose leader was unknown starts fetching.
func (r *ReplicaManager) refollowChangedBrokers(d *raftmeta.Delta, img *raftmeta.Image, t *partitionTable,
	start map[storage.TopicPartition]fetcher.InitialFetchState) {
	if len(d.ChangedBrokers) == 0 {
		return
	}
	for tp, p := range t.byTP {
		st := p.state.Load()
		if _, ok := start[tp]; ok || st.leader < 0 || st.leader == r.nodeID || !slices.Contains(d.ChangedBrokers, st.leader) {
			continue
		}
		if in, ok := r.initialFetchState(p, img); ok {
			start[tp] = in
		}
	}
}

// initialFetchState is where a follower starts fetching (Kafka's
// InitialFetchState with initialFetchOffset): at the log end offset when
// the log has leader epochs, since the leader then finds any divergence,
// else at the high watermark. A leader without an endpoint on the
// inter-broker listener is not fetched from until its registration
// changes.
func (r *ReplicaManager) initialFetchState(p *Partition, img *raftmeta.Image) (fetcher.InitialFetchState, bool) {
	st := p.state.Load()
	if st.leader < 0 {
		return fetcher.InitialFetchState{}, false
	}
	ep, _, ok := leaderEndpoint(img, st.leader, r.cfg.InterBrokerListener)
	if !ok {
		r.logger.Warn("cannot follow: the leader has no endpoint on the inter-broker listener", "partition", p.tp.String(),
			"leader", st.leader, "listener", r.cfg.InterBrokerListener)
		return fetcher.InitialFetchState{}, false
	}
	offset := p.Log().HighWatermark()
	if _, ok := p.Log().LatestEpoch(); ok {
		offset = p.Log().LogEndOffset()
	}
	return fetcher.InitialFetchState{
		TopicID:            p.topicID,
		Leader:             fetcher.BrokerEndPoint{ID: st.leader, Host: ep.Host, Port: ep.Port},
		CurrentLeaderEpoch: st.leaderEpoch,
		InitOffset:         offset,
	}, true
}

// followerReplica is the replica a fetcher writes for a local partition.
func (r *ReplicaManager) followerReplica(tp storage.TopicPartition) (fetcher.Replica, error) {
	p, ok := r.Partition(tp)
	if !ok {
		return nil, fmt.Errorf("replication: %s is not a local replica: %w", tp, kerr.NotLeaderForPartition)
	}
	return follower{p}, nil
}

// follower is a Partition as its fetcher sees it: the log, with the
// partition's lock held shared around changes (Kafka's
// appendRecordsToFollowerOrFutureReplica and truncateTo take it too) and
// its waiters woken after them. Writes are refused once the partition
// leads or is removed, a guard on top of the fetcher being stopped first.
type follower struct{ p *Partition }

func (f follower) LogStartOffset() int64      { return f.p.Log().LogStartOffset() }
func (f follower) LogEndOffset() int64        { return f.p.Log().LogEndOffset() }
func (f follower) LatestEpoch() (int32, bool) { return f.p.Log().LatestEpoch() }
func (f follower) EndOffsetForEpoch(epoch int32) (int32, int64, bool) {
	return f.p.Log().EndOffsetForEpoch(epoch)
}

// write runs fn with the partition's lock held shared, if it follows.
func (f follower) write(fn func() error) error {
	p := f.p
	p.leaderIsrUpdateLock.RLock()
	var err error
	if p.removed.Load() || p.state.Load().leader == p.localID {
		err = fmt.Errorf("replication: %s is not a follower: %w", p.tp, kerr.NotLeaderForPartition)
	} else {
		err = fn()
	}
	p.leaderIsrUpdateLock.RUnlock()
	p.watchers.notifyAll()
	return err
}

func (f follower) AppendAsFollower(records []byte) (info storage.AppendInfo, err error) {
	err = f.write(func() error {
		info, err = f.p.appendRecordsAsFollower(records)
		return err
	})
	return info, err
}

// appendRecordsAsFollower appends fetched batches that carry their offsets
// (Kafka's Partition.appendRecordsToFollowerOrFutureReplica). An empty log
// whose start offset falls inside the first batch — the leader's (or the
// mirror source's) log start offset was moved into it by DeleteRecords, and
// a fetch returns whole batches — restarts at the batch's first offset and
// appends it whole, as Kafka does; the log start offset then follows the
// leader's with the next fetch. leaderIsrUpdateLock is held shared.
func (p *Partition) appendRecordsAsFollower(records []byte) (storage.AppendInfo, error) {
	info, err := p.Log().AppendAsFollower(records)
	var ue *storage.UnexpectedAppendOffsetError
	if err == nil || !errors.As(err, &ue) {
		return info, err
	}
	leo := p.Log().LogEndOffset()
	if leo != p.Log().LogStartOffset() || ue.FirstOffset >= leo || ue.LastOffset < leo {
		return info, err
	}
	p.logger.Info("the first fetched batch starts below the empty log's start offset; restarting the log there",
		"firstOffset", ue.FirstOffset, "lastOffset", ue.LastOffset, "logStartOffset", leo)
	if err := p.Log().TruncateFullyAndStartAt(ue.FirstOffset); err != nil {
		return storage.AppendInfo{}, err
	}
	return p.Log().AppendAsFollower(records)
}

func (f follower) TruncateTo(offset int64) (truncated bool, err error) {
	err = f.write(func() error {
		if hw := f.p.Log().HighWatermark(); offset < hw {
			// Clean elections never take committed data away; Kafka
			// warns the same way.
			f.p.logger.Warn("truncating below the high watermark", "offset", offset, "highWatermark", hw)
		}
		truncated, err = f.p.Log().TruncateTo(offset)
		return err
	})
	return truncated, err
}

func (f follower) TruncateFullyAndStartAt(offset int64) error {
	return f.write(func() error { return f.p.Log().TruncateFullyAndStartAt(offset) })
}

func (f follower) MaybeIncrementHighWatermark(hw int64) (v int64, moved bool) {
	_ = f.write(func() error {
		v, moved = f.p.Log().MaybeIncrementHighWatermark(hw)
		return nil
	})
	return v, moved
}

func (f follower) MaybeIncrementLogStartOffset(offset int64) (moved bool, err error) {
	err = f.write(func() error {
		moved, err = f.p.Log().MaybeIncrementLogStartOffset(offset)
		return err
	})
	return moved, err
}
