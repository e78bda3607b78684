package replication

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/wire/kclient"
)

// newBrokerEndPoint connects a follower's fetcher to a leader broker
// (Kafka's RemoteLeaderEndPoint over a BlockingSend): one blocking
// connection to the leader's inter-broker endpoint, each request written
// and answered on the fetcher's own goroutine. Fetches go as this node's
// replica id with its broker epoch.
func (r *ReplicaManager) newBrokerEndPoint(leader fetcher.BrokerEndPoint) (fetcher.LeaderEndPoint, error) {
	cn := kclient.New(kclient.Config{
		Addr:     net.JoinHostPort(leader.Host, strconv.Itoa(int(leader.Port))),
		ClientID: fmt.Sprintf("broker-%d-fetcher-%d", r.nodeID, leader.ID),
		Dialer:   r.cfg.Dialer,
		SASL:     r.cfg.SASL,
		// replica.socket.timeout.ms: how long an answer may take beyond
		// the fetch's own wait.
		Timeout: time.Duration(r.cfg.ReplicaSocketTimeoutMs) * time.Millisecond,
		// The fetcher appends an answer's records (CompleteFetch, a
		// copy into the log) before it sends the next fetch, and keeps
		// no slice of them.
		ReuseResponseBuffer: true,
	})
	return &fetcher.KafkaEndPoint{
		Leader:              leader,
		ReplicaID:           r.nodeID,
		BrokerEpoch:         r.cfg.BrokerEpoch,
		MaxWaitMs:           max(r.cfg.ReplicaFetchWaitMaxMs, 0),
		MinBytes:            r.cfg.ReplicaFetchMinBytes,
		CoalesceMinBytes:    r.cfg.ReplicaFetchCoalesceMinBytes,
		CoalesceWaitMs:      max(r.cfg.ReplicaFetchCoalesceWaitMs, 0),
		MaxBytes:            r.cfg.ReplicaFetchResponseMaxBytes,
		PartitionMaxBytes:   r.cfg.ReplicaFetchMaxBytes,
		NoTruncationOnFetch: r.cfg.NoTruncationOnFetch,
		Send:                cn.Request,
		OnClose:             cn.Close,
	}, nil
}
