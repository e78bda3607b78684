package replication

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/quota"
)

// Replication throttles (KIP-73). A broker has two quotas, each a byte rate
// over the replicas a topic config names:
//
//   - leader: leader.replication.throttled.rate bounds what this broker, as
//     leader, sends to followers of the partitions in
//     leader.replication.throttled.replicas;
//   - follower: follower.replication.throttled.rate bounds what this
//     broker, as follower, fetches for the partitions in
//     follower.replication.throttled.replicas.
//
// A throttled replica that is in the ISR is never held back (Kafka's
// ReplicaManager.shouldLeaderThrottle and
// ReplicaFetcherThread.shouldFollowerThrottle), so acks=all never waits on
// a throttle; only replicas catching up (after a restart, a lost disk, a
// reassignment) are paced.

// Kafka's defaults (QuotaConfig, ReplicationQuotaManagerConfig).
const (
	// DefaultReplicationThrottledRate is Kafka's
	// QUOTA_BYTES_PER_SECOND_DEFAULT, Long.MAX_VALUE: no limit.
	DefaultReplicationThrottledRate = math.MaxInt64
	// DefaultReplicationQuotaWindowNum is replication.quota.window.num.
	DefaultReplicationQuotaWindowNum = 11
	// DefaultReplicationQuotaWindowSizeSeconds is
	// replication.quota.window.size.seconds.
	DefaultReplicationQuotaWindowSizeSeconds = 1
)

// ReplicationQuota is one side's throttle (Kafka's
// ReplicationQuotaManager): the bound, the measured rate of throttled
// bytes, and which local replicas are throttled. Safe for concurrent use;
// the fetch paths read it without locks but the rate's.
type ReplicationQuota struct {
	clock clock.Clock
	rate  *quota.Rate
	bound atomic.Int64 // bytes per second
	// throttled maps a topic to its throttled partitions on this broker,
	// nil for all of them ("*"); replaced whole.
	throttled atomic.Pointer[map[string]map[int32]bool]
}

// NewReplicationQuota returns an unbounded quota throttling nothing, with
// its rate over windows windows of size each.
func NewReplicationQuota(c clock.Clock, windows int, size time.Duration) *ReplicationQuota {
	// SimpleRate, as Kafka's ReplicationQuotaManager: a throttled
	// catch-up starts with at most one window of quota, not ten.
	q := &ReplicationQuota{clock: c, rate: quota.NewSimpleRate(windows, size)}
	q.bound.Store(DefaultReplicationThrottledRate)
	empty := map[string]map[int32]bool{}
	q.throttled.Store(&empty)
	return q
}

// UpdateQuota sets the bound in bytes per second (updateQuota); a value
// below 0 is taken as 0.
func (q *ReplicationQuota) UpdateQuota(bytesPerSecond int64) { q.bound.Store(max(bytesPerSecond, 0)) }

// Bound is the quota in bytes per second.
func (q *ReplicationQuota) Bound() int64 { return q.bound.Load() }

// IsQuotaExceeded reports whether the rate of throttled bytes is above the
// bound (Kafka's sensor quota check, value > bound).
func (q *ReplicationQuota) IsQuotaExceeded() bool {
	b := q.bound.Load()
	if b == DefaultReplicationThrottledRate {
		return false
	}
	return q.rate.Measure(q.clock.Now()) > float64(b)
}

// Record counts throttled bytes replicated (record).
func (q *ReplicationQuota) Record(bytes int64) {
	if bytes > 0 {
		q.rate.Record(float64(bytes), q.clock.Now())
	}
}

// Rate is the measured byte rate of throttled replication, Kafka's
// LeaderReplication / FollowerReplication byte-rate metric.
func (q *ReplicationQuota) Rate() float64 { return q.rate.Measure(q.clock.Now()) }

// IsThrottled reports whether a topic config names this broker's replica
// of tp (isThrottled).
func (q *ReplicationQuota) IsThrottled(tp storage.TopicPartition) bool {
	parts, ok := (*q.throttled.Load())[tp.Topic]
	return ok && (parts == nil || parts[tp.Partition])
}

// setThrottled replaces the throttled replicas (markThrottled and
// removeThrottle for every topic at once).
func (q *ReplicationQuota) setThrottled(m map[string]map[int32]bool) { q.throttled.Store(&m) }

// The topic configs naming throttled replicas.
const (
	leaderThrottledReplicasConfig   = "leader.replication.throttled.replicas"
	followerThrottledReplicasConfig = "follower.replication.throttled.replicas"
)

// throttledPartitions parses a throttled-replicas topic config for broker
// (Kafka's TopicConfigHandler.parseThrottledPartitions): "*" throttles
// every partition (all=true), "partition:broker,..." the partitions whose
// entry names broker. The controller validated the value
// (ThrottledReplicaListValidator); an entry that does not parse is skipped.
func throttledPartitions(value string, broker int32) (parts map[int32]bool, all bool) {
	value = strings.TrimSpace(value)
	if value == "*" {
		return nil, true
	}
	for _, e := range strings.Split(value, ",") {
		p, b, ok := strings.Cut(strings.TrimSpace(e), ":")
		if !ok {
			continue
		}
		pi, err1 := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		bi, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 32)
		if err1 != nil || err2 != nil || int32(bi) != broker {
			continue
		}
		if parts == nil {
			parts = map[int32]bool{}
		}
		parts[int32(pi)] = true
	}
	return parts, false
}

// throttledReplicas collects one side's throttled replicas of broker from
// every topic's config in img.
func throttledReplicas(img *raftmeta.Image, key string, broker int32) map[string]map[int32]bool {
	out := map[string]map[int32]bool{}
	for res, cfg := range img.Configs {
		if res.Type != raftmeta.ConfigResourceTopic {
			continue
		}
		v, ok := cfg[key]
		if !ok {
			continue
		}
		if parts, all := throttledPartitions(v, broker); all {
			out[res.Name] = nil
		} else if len(parts) > 0 {
			out[res.Name] = parts
		}
	}
	return out
}

// ReplicationQuotas are the leader and follower throttles of a broker.
type ReplicationQuotas struct {
	Leader, Follower *ReplicationQuota
}

// Quotas returns the broker's replication throttles.
func (r *ReplicaManager) Quotas() ReplicationQuotas { return r.quotas }

// updateReplicationQuotas applies the rates and throttled replicas of img
// (Kafka's BrokerConfigHandler and TopicConfigHandler). It runs with every
// delta that changed configs.
func (r *ReplicaManager) updateReplicationQuotas(img *raftmeta.Image) {
	leader, follower := r.cfg.ReplicationThrottledRates(img)
	r.quotas.Leader.UpdateQuota(leader)
	r.quotas.Follower.UpdateQuota(follower)
	r.quotas.Leader.setThrottled(throttledReplicas(img, leaderThrottledReplicasConfig, r.nodeID))
	r.quotas.Follower.setThrottled(throttledReplicas(img, followerThrottledReplicasConfig, r.nodeID))
}

// shouldLeaderThrottle says whether a follower's fetch of p gets no data
// now (Kafka's ReplicaManager.shouldLeaderThrottle): the follower is not in
// the ISR, its replica is throttled and the leader quota is spent.
func (r *ReplicaManager) shouldLeaderThrottle(st *partitionState, tp storage.TopicPartition, replicaID int32) bool {
	q := r.quotas.Leader
	return q.IsThrottled(tp) && !slices.Contains(st.isr, replicaID) && q.IsQuotaExceeded()
}

// recordLeaderThrottled counts what a follower's fetch returns for
// throttled partitions against the leader quota, whether or not that
// follower is in sync (Kafka's KafkaApis.sizeOfThrottledPartitions).
func (r *ReplicaManager) recordLeaderThrottled(parts []fetchPartition, results []readResult) {
	q := r.quotas.Leader
	var n int64
	for i := range results {
		if size := results[i].info.Records.Size; size > 0 && q.IsThrottled(parts[i].tp()) {
			n += int64(size)
		}
	}
	q.Record(n)
}
