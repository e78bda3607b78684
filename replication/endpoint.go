package replication

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/replication/fetcher"
)

// newBrokerEndPoint connects a follower's fetcher to a leader broker
// (Kafka's RemoteLeaderEndPoint over a BlockingSend): a kgo client whose
// only seed is the leader's inter-broker endpoint, every request sent
// straight to that seed, so no metadata round trip is needed and the
// connection cannot wander to another broker. Fetches go as this node's
// replica id with its broker epoch.
func (r *ReplicaManager) newBrokerEndPoint(leader fetcher.BrokerEndPoint) (fetcher.LeaderEndPoint, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(net.JoinHostPort(leader.Host, strconv.Itoa(int(leader.Port)))),
		kgo.ClientID(fmt.Sprintf("broker-%d-fetcher-%d", r.nodeID, leader.ID)),
		// replica.socket.timeout.ms: how long an answer may take beyond
		// the fetch's own wait.
		kgo.RequestTimeoutOverhead(time.Duration(r.cfg.ReplicaSocketTimeoutMs) * time.Millisecond),
		kgo.WithLogger(fetcher.KgoLogger(r.logger.With("leader", leader.ID))),
	}
	if r.cfg.Dialer != nil {
		opts = append(opts, kgo.Dialer(r.cfg.Dialer))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("replication: client for leader %s: %w", leader, err)
	}
	seed := cl.SeedBrokers()[0]
	return &fetcher.KafkaEndPoint{
		Leader:              leader,
		ReplicaID:           r.nodeID,
		BrokerEpoch:         r.cfg.BrokerEpoch,
		MaxWaitMs:           max(r.cfg.ReplicaFetchWaitMaxMs, 0),
		MinBytes:            r.cfg.ReplicaFetchMinBytes,
		MaxBytes:            r.cfg.ReplicaFetchResponseMaxBytes,
		PartitionMaxBytes:   r.cfg.ReplicaFetchMaxBytes,
		NoTruncationOnFetch: r.cfg.NoTruncationOnFetch,
		Send: func(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
			return seed.Request(ctx, req)
		},
		OnClose: func() error {
			cl.Close()
			return nil
		},
	}, nil
}
