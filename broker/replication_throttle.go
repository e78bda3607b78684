package broker

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/replication"
)

// replicationThrottledRates reads leader.replication.throttled.rate and
// follower.replication.throttled.rate for this broker from img (its own
// dynamic config over the cluster default over server.properties), as
// Kafka's BrokerConfigHandler does on every broker config change (KIP-73).
func (n *Node) replicationThrottledRates(img *raftmeta.Image) (leader, follower int64) {
	src := n.sources(img)
	rate := func(key string) int64 {
		v, _ := src.BrokerValue(key)
		r, err := strconv.ParseInt(v, 10, 64)
		if err != nil || r < 0 {
			return replication.DefaultReplicationThrottledRate
		}
		return r
	}
	return rate("leader.replication.throttled.rate"), rate("follower.replication.throttled.rate")
}

// alterLogDirsRate reads replica.alter.log.dirs.io.max.bytes.per.second
// for this broker from img, as replicationThrottledRates does.
func (n *Node) alterLogDirsRate(img *raftmeta.Image) int64 {
	v, _ := n.sources(img).BrokerValue("replica.alter.log.dirs.io.max.bytes.per.second")
	r, err := strconv.ParseInt(v, 10, 64)
	if err != nil || r < 0 {
		return replication.DefaultReplicationThrottledRate
	}
	return r
}

// replicationQuotas are the replica manager's throttles, if it runs.
func (n *Node) replicationQuotas() (replication.ReplicationQuotas, bool) {
	if n.replicas == nil {
		return replication.ReplicationQuotas{}, false
	}
	return n.replicas.Quotas(), true
}

// replicationQuotaCollector exports the replication throttles as Kafka's
// kafka.server:type=LeaderReplication,name=byte-rate and
// type=FollowerReplication,name=byte-rate, with the bounds beside them.
type replicationQuotaCollector struct {
	quotas      func() (replication.ReplicationQuotas, bool)
	rate, bound *prometheus.Desc
}

func newReplicationQuotaCollector(quotas func() (replication.ReplicationQuotas, bool)) *replicationQuotaCollector {
	return &replicationQuotaCollector{
		quotas: quotas,
		rate: prometheus.NewDesc("strait_replication_throttled_byte_rate",
			"Bytes per second of throttled replication (KIP-73) over the replication quota windows, by side: leader (Kafka's LeaderReplication byte-rate) or follower (FollowerReplication).", []string{"side"}, nil),
		bound: prometheus.NewDesc("strait_replication_throttled_rate_limit",
			"The replication throttle in bytes per second, by side (leader.replication.throttled.rate, follower.replication.throttled.rate); absent when unlimited.", []string{"side"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *replicationQuotaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.rate
	ch <- c.bound
}

// Collect implements prometheus.Collector.
func (c *replicationQuotaCollector) Collect(ch chan<- prometheus.Metric) {
	qs, ok := c.quotas()
	if !ok {
		return
	}
	for _, s := range []struct {
		side string
		q    *replication.ReplicationQuota
	}{{"leader", qs.Leader}, {"follower", qs.Follower}} {
		ch <- prometheus.MustNewConstMetric(c.rate, prometheus.GaugeValue, s.q.Rate(), s.side)
		if b := s.q.Bound(); b != replication.DefaultReplicationThrottledRate {
			ch <- prometheus.MustNewConstMetric(c.bound, prometheus.GaugeValue, float64(b), s.side)
		}
	}
}
