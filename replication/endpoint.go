package replication

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/replication/fetcher"
)

// LeaderConn is a follower fetcher's blocking connection to its leader
// (Kafka's BlockingSend): Request writes one request and waits for its
// answer. The fetcher is done with each answer before it sends the next
// request (it appends the records, a copy into the log, and keeps no slice
// of them), so the connection may read every answer into the same buffer.
type LeaderConn interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	Close() error
}

// LeaderConnConfig is what Config.DialLeader connects to.
type LeaderConnConfig struct {
	// Addr is the leader's inter-broker endpoint, host:port.
	Addr string
	// ClientID goes in every request header.
	ClientID string
	// Timeout is replica.socket.timeout.ms: how long an answer may take
	// beyond the fetch's own wait.
	Timeout time.Duration
}

// errNoDialLeader is the endpoint error of a manager given neither
// DialLeader nor NewLeaderEndPoint.
var errNoDialLeader = errors.New("replication: Config.DialLeader is not set")

// newBrokerEndPoint connects a follower's fetcher to a leader broker
// (Kafka's RemoteLeaderEndPoint over a BlockingSend): one blocking
// connection to the leader's inter-broker endpoint (Config.DialLeader),
// each request written and answered on the fetcher's own goroutine.
// Fetches go as this node's replica id with its broker epoch.
func (r *ReplicaManager) newBrokerEndPoint(leader fetcher.BrokerEndPoint) (fetcher.LeaderEndPoint, error) {
	if r.cfg.DialLeader == nil {
		return nil, errNoDialLeader
	}
	cn := r.cfg.DialLeader(LeaderConnConfig{
		Addr:     net.JoinHostPort(leader.Host, strconv.Itoa(int(leader.Port))),
		ClientID: fmt.Sprintf("broker-%d-fetcher-%d", r.nodeID, leader.ID),
		Timeout:  time.Duration(r.cfg.ReplicaSocketTimeoutMs) * time.Millisecond,
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
