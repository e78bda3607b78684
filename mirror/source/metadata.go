package source

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// metadata is the part of the source's metadata a mirror needs (what
// kgo's consumer keeps per cursor: the leader, its epoch and the topic id).
type metadata struct {
	brokers map[int32]fetcher.BrokerEndPoint
	topics  map[string]topicMeta
}

type topicMeta struct {
	id storage.TopicID
	// code and err are the topic's error: UNKNOWN_TOPIC_OR_PARTITION
	// (ErrSourceTopicNotFound), TOPIC_AUTHORIZATION_FAILED, ...
	code       int16
	err        error
	partitions map[int32]partitionMeta
}

type partitionMeta struct {
	leader int32 // -1: none
	epoch  int32 // -1: the source does not say (Metadata below v7)
}

// route is where a partition's requests go, or why they cannot go
// anywhere: code is the partition error the core then gets, err what is
// reported.
type route struct {
	leader int32
	epoch  int32
	id     storage.TopicID
	code   int16
	err    error
}

// routeLocked finds tp's route; expected is the mirror topic's id (zero:
// unknown, not checked). c.mu is held.
func (c *Cluster) routeLocked(tp storage.TopicPartition, expected storage.TopicID) route {
	tm, ok := c.meta.topics[tp.Topic]
	switch {
	case !ok:
		return route{leader: -1, epoch: -1, code: kerr.LeaderNotAvailable.Code,
			err: fmt.Errorf("no source metadata for topic %s: %w", tp.Topic, kerr.LeaderNotAvailable)}
	case tm.err != nil:
		return route{leader: -1, epoch: -1, code: tm.code, err: tm.err}
	case !expected.IsZero() && !tm.id.IsZero() && tm.id != expected:
		return route{leader: -1, epoch: -1, id: tm.id, code: kerr.InconsistentTopicID.Code,
			err: &TopicIDMismatchError{Topic: tp.Topic, Mirror: expected, Source: tm.id}}
	}
	pm, ok := tm.partitions[tp.Partition]
	if !ok {
		return route{leader: -1, epoch: -1, id: tm.id, code: kerr.UnknownTopicOrPartition.Code,
			err: fmt.Errorf("%w: %s (the source topic has %d partitions)", ErrSourcePartitionNotFound, tp, len(tm.partitions))}
	}
	if pm.leader < 0 {
		return route{leader: -1, epoch: pm.epoch, id: tm.id, code: kerr.LeaderNotAvailable.Code,
			err: fmt.Errorf("%s has no leader on the source: %w", tp, kerr.LeaderNotAvailable)}
	}
	return route{leader: pm.leader, epoch: pm.epoch, id: tm.id}
}

// brokerLocked is a source broker's endpoint (only its id when the
// metadata did not list it). c.mu is held.
func (c *Cluster) brokerLocked(id int32) fetcher.BrokerEndPoint {
	if b, ok := c.meta.brokers[id]; ok {
		return b
	}
	return fetcher.BrokerEndPoint{ID: id}
}

// markStale makes the next request refresh the metadata first.
func (c *Cluster) markStale() {
	c.mu.Lock()
	c.stale = true
	c.mu.Unlock()
}

// ensure refreshes the metadata before a request about topics when a topic
// is not cached, an error marked it stale (at most every
// MetadataMinInterval) or it is older than MetadataMaxAge. A failed
// refresh is an error only when a topic has no metadata at all; otherwise
// the request goes by what is cached. While the source's last answer came
// from this cluster itself, ensure fails with ErrSelfMirror.
func (c *Cluster) ensure(ctx context.Context, topics []string) error {
	c.mu.Lock()
	missing := !c.cachedLocked(topics)
	age := c.cfg.Clock.Now().Sub(c.refreshed)
	need := missing || age >= c.cfg.MetadataMaxAge ||
		((c.stale || c.self != nil || c.unusableLocked(topics)) && age >= c.cfg.MetadataMinInterval)
	self := c.self
	c.mu.Unlock()
	if !need {
		return self
	}
	err := c.refresh(ctx, topics, false)
	if err != nil && (missing || errors.Is(err, ErrSelfMirror)) {
		return err
	}
	if err != nil {
		c.logger.Warn("source metadata refresh failed; using the cached metadata", "err", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.self // a failed refresh did not clear an earlier finding
}

// cachedLocked reports whether every topic has metadata. c.mu is held.
func (c *Cluster) cachedLocked(topics []string) bool {
	for _, t := range topics {
		if _, ok := c.meta.topics[t]; !ok {
			return false
		}
	}
	return true
}

// unusableLocked reports whether a topic's cached metadata gives no route
// to some partition: a topic error (not found yet, not authorized) or a
// partition without a leader. Such an answer is never kept for the whole
// MetadataMaxAge: a topic just created on the source may not have reached
// the broker that answered. c.mu is held.
func (c *Cluster) unusableLocked(topics []string) bool {
	for _, t := range topics {
		tm := c.meta.topics[t]
		if tm.err != nil {
			return true
		}
		for _, pm := range tm.partitions {
			if pm.leader < 0 {
				return true
			}
		}
	}
	return false
}

// refresh loads the metadata of every topic of interest plus topics. A
// refresh that another caller completed while this one waited its turn
// counts, unless force asks for a fresh answer.
func (c *Cluster) refresh(ctx context.Context, topics []string, force bool) error {
	c.mu.Lock()
	for _, t := range topics {
		c.interest[t] = struct{}{}
	}
	gen := c.gen
	c.mu.Unlock()

	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	c.mu.Lock()
	if !force && c.gen != gen && c.cachedLocked(topics) {
		c.mu.Unlock()
		return nil
	}
	names := slices.Sorted(maps.Keys(c.interest))
	c.mu.Unlock()
	if len(names) == 0 {
		return nil
	}

	req := kmsg.NewPtrMetadataRequest()
	// A nil topic list would ask for every topic; auto creation must
	// never create a topic on the source.
	req.AllowAutoTopicCreation = false
	for _, t := range names {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.MetadataTimeout)
	defer cancel()
	resp, err := req.RequestWith(rctx, c.cl)
	if err != nil {
		return fmt.Errorf("mirror source %s: metadata: %w", c.cfg.MirrorName, err)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkNotSelfLocked(resp.ClusterID); err != nil {
		return err
	}
	brokers := make(map[int32]fetcher.BrokerEndPoint, len(resp.Brokers))
	for _, b := range resp.Brokers {
		brokers[b.NodeID] = fetcher.BrokerEndPoint{ID: b.NodeID, Host: b.Host, Port: b.Port}
	}
	c.meta.brokers = brokers
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		name := *t.Topic
		if _, asked := c.interest[name]; !asked {
			continue
		}
		tm := topicMeta{id: storage.TopicID(t.TopicID), code: t.ErrorCode, partitions: map[int32]partitionMeta{}}
		switch t.ErrorCode {
		case 0:
		case kerr.UnknownTopicOrPartition.Code:
			tm.err = fmt.Errorf("%w: %s", ErrSourceTopicNotFound, name)
		default:
			tm.err = fmt.Errorf("source metadata of topic %s: %w", name, kerr.ErrorForCode(t.ErrorCode))
		}
		for _, p := range t.Partitions {
			tm.partitions[p.Partition] = partitionMeta{leader: p.Leader, epoch: p.LeaderEpoch}
		}
		c.meta.topics[name] = tm
	}
	c.stale = false
	c.refreshed = c.cfg.Clock.Now()
	c.gen++
	return nil
}

// checkNotSelfLocked records whether a Metadata answer came from this
// cluster itself (its cluster id is Config.LocalClusterID) and returns
// ErrSelfMirror if so; the answer must then be dropped. c.mu is held.
func (c *Cluster) checkNotSelfLocked(clusterID *string) error {
	c.self = nil
	if local := c.cfg.LocalClusterID; local != "" && clusterID != nil && *clusterID == local {
		c.self = &SelfMirrorError{Mirror: c.cfg.MirrorName, ClusterID: local, BootstrapServers: c.cfg.BootstrapServers}
		// Counts as an answer, so retries are spaced by
		// MetadataMinInterval instead of hammering this cluster.
		c.refreshed = c.cfg.Clock.Now()
	}
	return c.self
}

// ClusterID asks the source for its cluster id (Metadata for no topic);
// ErrSelfMirror when it is this cluster's.
func (c *Cluster) ClusterID(ctx context.Context) (string, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // none: a nil list asks for every topic
	req.AllowAutoTopicCreation = false
	rctx, cancel := context.WithTimeout(ctx, c.cfg.MetadataTimeout)
	defer cancel()
	resp, err := req.RequestWith(rctx, c.cl)
	if err != nil {
		return "", fmt.Errorf("mirror source %s: metadata: %w", c.cfg.MirrorName, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkNotSelfLocked(resp.ClusterID); err != nil {
		return "", err
	}
	if resp.ClusterID == nil {
		return "", nil
	}
	return *resp.ClusterID, nil
}
