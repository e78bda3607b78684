package source

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// Cluster is one mirror's connection to its source cluster: the client,
// the source metadata cache and the per-partition status every EndPoint of
// the mirror shares. Its methods are safe for concurrent use.
type Cluster struct {
	cfg    Config
	cl     *kgo.Client
	logger *slog.Logger

	// refreshMu serializes metadata refreshes; it is taken before mu,
	// never while holding it.
	refreshMu sync.Mutex

	mu   sync.Mutex
	meta metadata
	// interest is every topic asked about: a refresh reloads them all.
	interest map[string]struct{}
	// expected is each topic's mirror topic id, learned from the fetches
	// (FetchPartition.TopicID) or SetTopicID, so the requests that carry
	// no topic id (ListOffsets, OffsetForLeaderEpoch) still notice a
	// recreated source topic.
	expected map[string]storage.TopicID
	// stale asks the next request to refresh the metadata first (an error
	// said a leader moved); refreshed is when the last refresh answered
	// and gen counts refreshes.
	stale     bool
	refreshed time.Time
	gen       uint64
	status    map[storage.TopicPartition]*partitionStatus
	// self is set while the source's last answer carried this cluster's
	// own id (Config.LocalClusterID): nothing is routed anywhere then.
	self error
}

// New returns the source connection of a mirror. It does no IO: the
// client connects on the first request.
func New(cfg Config) (*Cluster, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger.With("mirror", cfg.MirrorName)
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.BootstrapServers...),
		kgo.ClientID(ClientID(cfg.MirrorName)),
		kgo.WithLogger(fetcher.KgoLogger(logger)),
		// The mirror RPCs (ReadMirrorStates for the LME) are past the keys
		// kgo knows; a source without them fails those requests early.
		kgo.MaxVersions(mirrormsg.MaxVersions(nil)),
	}
	opts = append(opts, cfg.ClientOpts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("mirror source %s: client: %w", cfg.MirrorName, err)
	}
	return &Cluster{
		cfg:      cfg,
		cl:       cl,
		logger:   logger,
		meta:     metadata{brokers: map[int32]fetcher.BrokerEndPoint{}, topics: map[string]topicMeta{}},
		interest: map[string]struct{}{},
		expected: map[string]storage.TopicID{},
		status:   map[storage.TopicPartition]*partitionStatus{},
	}, nil
}

// Client is the source client, for the driver's other requests to the
// source (ReadMirrorStates for the LME, the periodic syncs), so a mirror
// keeps one set of connections.
func (c *Cluster) Client() *kgo.Client { return c.cl }

// Close closes the client. The endpoints must not be used afterwards.
func (c *Cluster) Close() { c.cl.Close() }

// NewEndPoint returns an endpoint named after leader, for
// fetcher.ManagerConfig.NewEndPoint. It routes every partition to its
// current source leader whatever leader it is named after (see the package
// doc).
func (c *Cluster) NewEndPoint(leader fetcher.BrokerEndPoint) (fetcher.LeaderEndPoint, error) {
	return &EndPoint{c: c, leader: leader}, nil
}

// SetTopicID records the mirror topic's id for a topic, so every request
// checks the source topic against it. Fetches learn it by themselves from
// the fetch states.
func (c *Cluster) SetTopicID(topic string, id storage.TopicID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setExpectedLocked(topic, id)
}

func (c *Cluster) setExpectedLocked(topic string, id storage.TopicID) {
	if !id.IsZero() {
		c.expected[topic] = id
	}
}

// Leader returns tp's source leader and leader epoch, refreshing the source
// metadata when it has not got the topic yet: the driver's
// InitialFetchState.Leader. A partition without a usable leader is an
// error (a *PartitionError).
func (c *Cluster) Leader(ctx context.Context, tp storage.TopicPartition) (fetcher.BrokerEndPoint, int32, error) {
	if err := c.ensure(ctx, []string{tp.Topic}); err != nil {
		return fetcher.BrokerEndPoint{}, -1, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.routeLocked(tp, c.expected[tp.Topic])
	if r.err != nil {
		return fetcher.BrokerEndPoint{}, -1, &PartitionError{TP: tp, Op: "route", Broker: -1, Err: r.err}
	}
	return c.brokerLocked(r.leader), r.epoch, nil
}

// TopicInfo is what the source says about a topic.
type TopicInfo struct {
	ID         storage.TopicID
	Partitions int32
	// Err is ErrSourceTopicNotFound or the source's topic error.
	Err error
}

// Topics describes topics on the source (for StartMirrorTopics: the
// destination topic takes the source's id and partition count), refreshing
// the metadata first.
func (c *Cluster) Topics(ctx context.Context, topics ...string) (map[string]TopicInfo, error) {
	if err := c.refresh(ctx, topics, true); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]TopicInfo, len(topics))
	for _, t := range topics {
		tm, ok := c.meta.topics[t]
		switch {
		case !ok:
			out[t] = TopicInfo{Err: fmt.Errorf("%w: %s: no answer", ErrSourceTopicNotFound, t)}
		case tm.err != nil:
			out[t] = TopicInfo{ID: tm.id, Err: tm.err}
		default:
			out[t] = TopicInfo{ID: tm.id, Partitions: int32(len(tm.partitions))}
		}
	}
	return out, nil
}

// Forget drops a partition's status and, once none of its partitions is
// left, the topic from the metadata refreshes: the partition left the
// mirror.
func (c *Cluster) Forget(tps ...storage.TopicPartition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tp := range tps {
		delete(c.status, tp)
	}
	for _, tp := range tps {
		still := false
		for other := range c.status {
			if other.Topic == tp.Topic {
				still = true
				break
			}
		}
		if !still {
			delete(c.interest, tp.Topic)
			delete(c.expected, tp.Topic)
			delete(c.meta.topics, tp.Topic)
		}
	}
}
