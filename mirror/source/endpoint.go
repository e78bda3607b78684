package source

import (
	"github.com/strait-io/strait/replication/fetcher"
)

// EndPoint is a fetcher.LeaderEndPoint on a mirror's source cluster (the
// mirror's counterpart of Kafka's RemoteLeaderEndPoint): consumer requests,
// each partition sent to its current source leader. Its IO methods are
// called from one fetcher goroutine at a time; several endpoints of one
// Cluster run concurrently.
type EndPoint struct {
	c      *Cluster
	leader fetcher.BrokerEndPoint
}

var _ fetcher.LeaderEndPoint = (*EndPoint)(nil)

// Broker is the source broker the endpoint is named after (the fetcher's
// group in the manager); requests go to each partition's current leader.
func (e *EndPoint) Broker() fetcher.BrokerEndPoint { return e.leader }

// IsTruncationOnFetchSupported is always true: a mirror needs KIP-595's
// LastFetchedEpoch/DivergingEpoch (Fetch v12+, Kafka 2.7+), and a source
// broker below it fails the partitions with ErrSourceUnsupported rather
// than copying without divergence checks.
func (e *EndPoint) IsTruncationOnFetchSupported() bool { return true }

// Close does nothing: the Cluster owns the connections and outlives the
// fetchers.
func (e *EndPoint) Close() error { return nil }

// Cluster is the source connection the endpoint belongs to.
func (e *EndPoint) Cluster() *Cluster { return e.c }
