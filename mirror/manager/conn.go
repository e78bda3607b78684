package manager

import (
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// mirrorConn is one mirror's source side: the source connection and the
// fetcher manager whose fetchers copy the mirror's partitions (Kafka's
// per-mirror fetcher manager, one fetcher per source broker), and the
// Replica wrappers the fetchers write through.
type mirrorConn struct {
	name    string
	configs map[string]string
	// err is why the connection could not be built from configs (then
	// cluster and fetchers are nil until the configs change).
	err      error
	cluster  *source.Cluster
	fetchers *fetcher.Manager

	mu       sync.Mutex
	replicas map[storage.TopicPartition]*mirrorReplica
}

// errNoSource: the mirror has no usable source connection.
var errNoSource = errors.New("mirror has no source connection")

// reconcileConns keeps one connection per mirror of img, built from its
// configs, and rebuilds it when they change; the partitions fetching
// through an old connection move to the new one with their fetch state.
func (m *Manager) reconcileConns(img *raftmeta.Image) {
	m.connMu.Lock()
	defer m.connMu.Unlock()
	for _, name := range img.MirrorNames() {
		cfgs := img.MirrorConfig(name)
		old, ok := m.conns[name]
		if ok && maps.Equal(old.configs, cfgs) {
			continue
		}
		c := m.newConn(name, cfgs)
		m.conns[name] = c
		if ok {
			m.logger.Info("mirror configs changed; reconnecting to the source", "mirror", name)
			old.moveTo(c)
			m.closeLater(old)
		}
	}
	for name, c := range m.conns {
		if _, ok := img.Mirrors[name]; !ok {
			m.logger.Info("mirror deleted; closing its source connection", "mirror", name)
			delete(m.conns, name)
			m.closeLater(c)
		}
	}
}

// newConn builds a mirror's connection (no IO: the client connects on its
// first request).
func (m *Manager) newConn(name string, cfgs map[string]string) *mirrorConn {
	c := &mirrorConn{name: name, configs: maps.Clone(cfgs), replicas: map[storage.TopicPartition]*mirrorReplica{}}
	opts, err := source.ClientOptions(cfgs, m.cfg.SourceDialer)
	if err != nil {
		c.err = err
		m.logger.Error("mirror configs unusable", "mirror", name, "err", err)
		return c
	}
	counters := m.counters.of(name)
	cl, err := source.New(source.Config{
		MirrorName:         name,
		BootstrapServers:   source.BootstrapServers(cfgs),
		ClientOpts:         opts,
		LocalClusterID:     m.cfg.ClusterID,
		MaxWaitMs:          m.cfg.FetchMaxWaitMs,
		MinBytes:           m.cfg.FetchMinBytes,
		MaxBytes:           m.cfg.FetchMaxBytes,
		PartitionMaxBytes:  m.cfg.FetchPartitionMaxBytes,
		Clock:              m.cfg.Clock,
		Logger:             m.logger,
		OnPartitionError:   func(tp storage.TopicPartition, err error) { m.onPartitionError(c, counters, tp, err) },
		SkipDeletedOffsets: source.SkipsDeletedOffsets(cfgs),
		OnOffsetsSkipped: func(tp storage.TopicPartition, from, to int64) {
			counters.skipped(tp, to-from)
			m.logger.Warn("mirror skipped offsets the source deleted before they were mirrored", "mirror", name,
				"partition", tp.String(), "from", from, "to", to)
		},
	})
	if err != nil {
		c.err = err
		m.logger.Error("cannot connect the mirror to its source", "mirror", name, "err", err)
		return c
	}
	c.cluster = cl
	c.fetchers = fetcher.NewManager(fetcher.ManagerConfig{
		Name: "MirrorFetcher-" + name,
		NewEndPoint: func(leader fetcher.BrokerEndPoint) (fetcher.LeaderEndPoint, error) {
			ep, err := cl.NewEndPoint(leader)
			if err == nil && m.wrapEndPoint != nil {
				ep = m.wrapEndPoint(ep)
			}
			return ep, err
		},
		Replicas: c.replica,
		Clock:    m.cfg.Clock,
		Backoff:  m.cfg.FetchBackoff,
		Logger:   m.logger.With("mirror", name),
	})
	c.fetchers.Start(m.ctx)
	return c
}

// onPartitionError maps a source error to the machine's FetchFailed: the
// fatal ones fail the partition (a recreated source topic for good), the
// rest are only recorded.
func (m *Manager) onPartitionError(c *mirrorConn, counters *mirrorCounters, tp storage.TopicPartition, err error) {
	counters.fetchErrors.Add(1)
	c.mu.Lock()
	r, ok := c.replicas[tp]
	c.mu.Unlock()
	if !ok {
		return
	}
	kind := partition.FetchRetriable
	switch {
	case errors.Is(err, source.ErrSourceTopicRecreated):
		kind = partition.FetchSourceTopicIDChanged
	case source.IsFatal(err):
		kind = partition.FetchFatal
	}
	m.postPart(tp, partition.FetchFailed{Ref: r.ref, Kind: kind, Err: err})
}

// replica is the fetcher manager's Replicas: the wrapper the partition's
// AddFetcher registered.
func (c *mirrorConn) replica(tp storage.TopicPartition) (fetcher.Replica, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.replicas[tp]
	if !ok {
		return nil, fmt.Errorf("mirror %s does not fetch %s", c.name, tp)
	}
	return r, nil
}

// usable returns an error when the connection cannot fetch.
func (c *mirrorConn) usable() error {
	if c.err != nil {
		return fmt.Errorf("%w: mirror %s: %w", errNoSource, c.name, c.err)
	}
	return nil
}

// add starts fetching tp through r.
func (c *mirrorConn) add(r *mirrorReplica, in fetcher.InitialFetchState) error {
	c.fetchers.RemoveFetcherForPartitions([]storage.TopicPartition{r.tp})
	c.mu.Lock()
	c.replicas[r.tp] = r
	c.mu.Unlock()
	c.cluster.SetTopicID(r.tp.Topic, storage.TopicID(in.TopicID))
	return c.fetchers.AddFetcherForPartitions(map[storage.TopicPartition]fetcher.InitialFetchState{r.tp: in})
}

// remove stops fetching tp; when it returns nothing fetches into its log.
func (c *mirrorConn) remove(tp storage.TopicPartition) {
	if c.fetchers == nil {
		return
	}
	c.fetchers.RemoveFetcherForPartitions([]storage.TopicPartition{tp})
	c.mu.Lock()
	delete(c.replicas, tp)
	c.mu.Unlock()
	// An idle fetcher is kept: there is at most one per source broker,
	// and stopping it would wait for its fetch in flight.
}

// forget drops what the source said about tp (it left this node).
func (c *mirrorConn) forget(tp storage.TopicPartition) {
	if c.cluster != nil {
		c.cluster.Forget(tp)
	}
}

// moveTo hands every partition c fetches to next, where it continues from
// its log end offset in the same leader epoch with the same Replica
// wrapper (the machine does not notice).
func (c *mirrorConn) moveTo(next *mirrorConn) {
	if c.fetchers == nil {
		return
	}
	c.mu.Lock()
	moving := maps.Clone(c.replicas)
	c.replicas = map[storage.TopicPartition]*mirrorReplica{}
	c.mu.Unlock()
	tps := make([]storage.TopicPartition, 0, len(moving))
	for tp := range moving {
		tps = append(tps, tp)
	}
	states := c.fetchers.RemoveFetcherForPartitions(tps)
	for tp, st := range states {
		r := moving[tp]
		if next.fetchers == nil {
			// The new configs are unusable: the machine fails the
			// partition and retries it once they are fixed.
			r.report(partition.FetchFailed{Ref: r.ref, Kind: partition.FetchFatal, Err: next.usable()})
			continue
		}
		in := fetcher.InitialFetchState{TopicID: st.TopicID, Leader: r.leader, CurrentLeaderEpoch: st.CurrentLeaderEpoch, InitOffset: -1}
		if err := next.add(r, in); err != nil {
			// The machine's fetcher stops; it is failed below so the
			// machine restarts it.
			r.report(partition.FetchFailed{Ref: r.ref, Kind: partition.FetchFatal, Err: err})
		}
	}
}

// close stops the fetchers and the client.
func (c *mirrorConn) close() {
	if c.fetchers != nil {
		c.fetchers.Shutdown()
	}
	if c.cluster != nil {
		c.cluster.Close()
	}
}

// closeLater closes a replaced connection without holding the loop (a
// fetcher stops at the end of its current request).
func (m *Manager) closeLater(c *mirrorConn) {
	m.wg.Go(c.close)
}
