package broker

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/mirror/state"
	"github.com/strait-io/strait/mirror/syncer"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// mirrorSyncers runs the metadata sync of each mirror (mirror/syncer,
// KIP-1279's MirrorSourceSyncer) on the broker that leads the mirror's
// __mirror_state partition (state.PartitionForMirror): "all mirror-level
// work … is handled by a single broker per mirror" (digest §4.1, §6).
// Syncers start and stop as that leadership moves (OnLeadershipChange)
// and as mirrors come, go or change their configs (every image).
type mirrorSyncers struct {
	n *Node

	mu      sync.Mutex
	started bool // set once the broker joined the cluster
	closed  bool
	// led are the __mirror_state partitions this broker leads.
	led     map[int32]bool
	running map[string]*runningSyncer
	// retired are the Stats of a mirror's stopped syncers, so the
	// exported counters never go back when a syncer is replaced.
	retired map[string]syncer.Stats
	// dst is the syncers' client of this broker (created on first use,
	// closed by close).
	dst *kgo.Client
	wg  sync.WaitGroup
}

// runningSyncer is one mirror's syncer and what it was built from.
type runningSyncer struct {
	configs map[string]string
	s       *syncer.Syncer // nil when the configs were unusable
	cancel  context.CancelFunc
}

func newMirrorSyncers(n *Node) *mirrorSyncers {
	return &mirrorSyncers{n: n, led: map[int32]bool{}, running: map[string]*runningSyncer{}, retired: map[string]syncer.Stats{}}
}

// start begins hosting syncers: once the broker is registered, since they
// write through its listener.
func (m *mirrorSyncers) start() {
	m.mu.Lock()
	m.started = true
	m.mu.Unlock()
	m.n.replicas.OnLeadershipChange(func(tp storage.TopicPartition, leader bool, _ int32) {
		if tp.Topic != raftmeta.MirrorStateTopic {
			return
		}
		m.mu.Lock()
		if leader {
			m.led[tp.Partition] = true
		} else {
			delete(m.led, tp.Partition)
		}
		m.mu.Unlock()
		m.onImage(m.n.quorum.Image())
	})
	m.onImage(m.n.quorum.Image())
}

// onImage starts, restarts and stops syncers to match img. It never
// blocks on IO: it runs on the metadata publisher.
func (m *mirrorSyncers) onImage(img *raftmeta.Image) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.started || m.closed {
		return
	}
	want := map[string]bool{}
	if t, ok := img.Topics[raftmeta.MirrorStateTopic]; ok && len(t.Partitions) > 0 {
		for _, name := range img.MirrorNames() {
			if m.led[state.PartitionForMirror(name, int32(len(t.Partitions)))] {
				want[name] = true
			}
		}
	}
	for name, r := range m.running {
		if !want[name] || !maps.Equal(r.configs, img.MirrorConfig(name)) {
			m.stopLocked(name, r)
		}
	}
	for name := range want {
		if _, ok := m.running[name]; !ok {
			m.startLocked(name, img.MirrorConfig(name))
		}
	}
}

func (m *mirrorSyncers) stopLocked(name string, r *runningSyncer) {
	delete(m.running, name)
	if r.cancel != nil {
		r.cancel()
		m.n.logger.Info("stopped the mirror's metadata sync", "mirror", name)
	}
}

// startLocked builds and starts a mirror's syncer.
func (m *mirrorSyncers) startLocked(name string, cfgs map[string]string) {
	r := &runningSyncer{configs: maps.Clone(cfgs)}
	m.running[name] = r
	src, err := m.sourceClient(name, cfgs)
	if err == nil {
		var dst *kgo.Client
		if dst, err = m.destClient(); err == nil {
			r.s, err = syncer.New(syncer.Config{
				Mirror:      name,
				Source:      src,
				Destination: dst,
				Image:       m.n.quorum.Image,
				Interval:    syncer.RefreshInterval(cfgs),
				ScramSync:   m.syncScram,
				Logger:      m.n.logger,
			})
		}
		if err != nil {
			src.Close()
		}
	}
	if err != nil {
		// Kept in running with its configs: retried when they change.
		m.n.logger.Error("cannot sync the mirror's metadata with these configs", "mirror", name, "err", err)
		return
	}
	ctx, cancel := context.WithCancel(m.n.bgCtx)
	r.cancel = cancel
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		r.s.Run(ctx)
		src.Close()
		m.mu.Lock()
		m.retired[name] = m.retired[name].Add(r.s.Stats())
		m.mu.Unlock()
	}()
	m.n.logger.Info("started the mirror's metadata sync", "mirror", name, "interval", syncer.RefreshInterval(cfgs))
}

// syncScram forwards a syncer's SCRAM batch to the active controller,
// over the controller channel: SyncScramCredentials is not served on a
// client listener.
func (m *mirrorSyncers) syncScram(ctx context.Context, req *mirrormsg.SyncScramCredentialsRequest) (*mirrormsg.SyncScramCredentialsResponse, error) {
	resp, ok := m.n.forward(ctx, req).(*mirrormsg.SyncScramCredentialsResponse)
	if !ok {
		return nil, fmt.Errorf("the controller answered SyncScramCredentials with no response")
	}
	return resp, nil
}

// sourceClient is a client of the mirror's source cluster, built from its
// configs like the mirror manager's (mirror/source.ClientOptions) and
// dialing through the node's dialer.
func (m *mirrorSyncers) sourceClient(name string, cfgs map[string]string) (*kgo.Client, error) {
	opts, err := source.ClientOptions(cfgs, m.n.opts.Dialer)
	if err != nil {
		return nil, err
	}
	opts = append(opts,
		kgo.SeedBrokers(source.BootstrapServers(cfgs)...),
		kgo.ClientID(fmt.Sprintf("strait-mirror-syncer-%s-%d", name, m.n.cfg.NodeID)),
		// The SCRAM step sends DescribeScramCredentialSecrets (key 9412),
		// which kgo's default version table lacks.
		kgo.MaxVersions(mirrormsg.MaxVersions(nil)),
		// kgo answers Metadata requests from a cache younger than this:
		// each round must see the source's topics as they are now.
		kgo.MetadataMinAge(min(max(syncer.RefreshInterval(cfgs)/2, 10*time.Millisecond), 5*time.Second)),
		kgo.WithLogger(fetcher.KgoLogger(m.n.logger.With("component", "mirror-syncer-source", "mirror", name))),
	)
	return kgo.NewClient(opts...)
}

// destClient is the syncers' client of the destination: this broker's own
// inter-broker listener, so their writes take the normal request paths.
// The caller holds mu.
func (m *mirrorSyncers) destClient() (*kgo.Client, error) {
	if m.dst != nil {
		return m.dst, nil
	}
	seed, err := m.n.interBrokerAddr()
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(seed),
		kgo.ClientID(fmt.Sprintf("strait-mirror-syncer-%d", m.n.cfg.NodeID)),
		kgo.MaxVersions(mirrormsg.MaxVersions(nil)),
		kgo.WithLogger(fetcher.KgoLogger(m.n.logger.With("component", "mirror-syncer"))),
	}
	opts = append(opts, m.n.interBrokerClientOpts()...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("mirror syncer client: %w", err)
	}
	m.dst = cl
	return cl, nil
}

// scramSyncStatus is the SCRAM sync error of a mirror whose syncer this
// broker runs, "" otherwise.
func (m *mirrorSyncers) scramSyncStatus(name string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.running[name]; ok && r.s != nil {
		return r.s.ScramSyncStatus()
	}
	return ""
}

// syncer is the syncer of mirror on this broker; running is false if
// this broker does not sync the mirror, and the syncer nil if it should
// but cannot with the mirror's configs.
func (m *mirrorSyncers) syncer(name string) (s *syncer.Syncer, running bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.running[name]
	if !ok {
		return nil, false
	}
	return r.s, true
}

// skippedOffsets is what the last round of a mirror's syncer on this
// broker left alone in the consumer group step (DescribeMirrors'
// SkippedGroupOffsets), nil if this broker does not sync the mirror.
func (m *mirrorSyncers) skippedOffsets(name string) []mirrormsg.DescribeMirrorsResponseSkippedGroupOffset {
	m.mu.Lock()
	r, ok := m.running[name]
	m.mu.Unlock()
	if !ok || r.s == nil {
		return nil
	}
	var out []mirrormsg.DescribeMirrorsResponseSkippedGroupOffset
	for _, o := range r.s.Skipped() {
		d := mirrormsg.NewDescribeMirrorsResponseSkippedGroupOffset()
		d.GroupID, d.TopicName, d.PartitionIndex, d.Reason = o.Group, o.Topic, o.Partition, string(o.Reason)
		d.CommittedOffset, d.SourceOffset = o.Committed, o.Source
		out = append(out, d)
	}
	return out
}

// close stops every syncer and waits for them.
func (m *mirrorSyncers) close() {
	m.mu.Lock()
	m.closed = true
	for name, r := range m.running {
		m.stopLocked(name, r)
	}
	m.mu.Unlock()
	m.wg.Wait()
	m.mu.Lock()
	if m.dst != nil {
		m.dst.Close()
		m.dst = nil
	}
	m.mu.Unlock()
}

// stats are the sync counters of every mirror this broker has synced.
func (m *mirrorSyncers) stats() map[string]syncer.Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := maps.Clone(m.retired)
	for name, r := range m.running {
		if r.s != nil {
			out[name] = out[name].Add(r.s.Stats())
		}
	}
	return out
}

// mirrorSyncCollector exports the syncers' error counters, the
// prototype's MirrorMetadataManager gauges (digest §8.1) as Prometheus
// counters: strait_mirror_topic_config_sync_errors_total{mirror} and so
// on, plus the rounds run.
type mirrorSyncCollector struct {
	stats func() map[string]syncer.Stats

	rounds, metadata, configs, offsets, shares, acls, scram *prometheus.Desc
	scramUpserted, scramDeleted                             *prometheus.Desc
	quotas, quotasAltered                                   *prometheus.Desc
	groupsSkippedActive, offsetsSkippedAhead                *prometheus.Desc
}

func newMirrorSyncCollector(stats func() map[string]syncer.Stats) *mirrorSyncCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, []string{"mirror"}, nil)
	}
	return &mirrorSyncCollector{
		stats:         stats,
		rounds:        d("strait_mirror_sync_rounds_total", "Metadata sync rounds this broker ran for the mirror."),
		metadata:      d("strait_mirror_topic_metadata_refresh_errors_total", "Failed topic discovery and partition refreshes of the mirror's metadata sync (TopicMetadataRefreshError)."),
		configs:       d("strait_mirror_topic_config_sync_errors_total", "Failed topic config syncs of the mirror (TopicConfigSyncError)."),
		offsets:       d("strait_mirror_consumer_group_offset_sync_errors_total", "Failed consumer group offset syncs of the mirror (ConsumerGroupOffsetSyncError)."),
		shares:        d("strait_mirror_share_group_offset_sync_errors_total", "Failed share group offset syncs of the mirror (ShareGroupOffsetSyncError)."),
		acls:          d("strait_mirror_acl_sync_errors_total", "Failed ACL syncs of the mirror (AclSyncError)."),
		scram:         d("strait_mirror_scram_sync_errors_total", "Failed SCRAM credential syncs of the mirror; a source that cannot export, or a PLAINTEXT link, counts once."),
		scramUpserted: d("strait_mirror_scram_credentials_upserted_total", "SCRAM credentials the mirror's sync set on the destination (new users and changed passwords)."),
		scramDeleted:  d("strait_mirror_scram_credentials_deleted_total", "SCRAM credentials the mirror's sync deleted on the destination (gone from the source)."),
		quotas:        d("strait_mirror_client_quota_sync_errors_total", "Failed client quota syncs of the mirror (mirror.client.quotas.sync.enable)."),
		quotasAltered: d("strait_mirror_client_quotas_altered_total", "Client quota entities the mirror's sync altered on the destination."),
		groupsSkippedActive: d("strait_mirror_consumer_group_offsets_skipped_active_total",
			"Consumer groups whose offsets a sync round left alone because they had members on the destination (mirror.consumer.offsets.sync.active.groups=skip), once a round each."),
		offsetsSkippedAhead: d("strait_mirror_consumer_group_offsets_skipped_ahead_total",
			"Partitions of active consumer groups a forward-only sync round left alone because the destination's committed offset was not behind the source's."),
	}
}

// Describe implements prometheus.Collector.
func (c *mirrorSyncCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.rounds, c.metadata, c.configs, c.offsets, c.shares, c.acls, c.scram, c.scramUpserted, c.scramDeleted, c.quotas, c.quotasAltered, c.groupsSkippedActive, c.offsetsSkippedAhead} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *mirrorSyncCollector) Collect(ch chan<- prometheus.Metric) {
	for name, st := range c.stats() {
		for _, m := range []struct {
			d *prometheus.Desc
			v int64
		}{
			{c.rounds, st.Rounds},
			{c.metadata, st.TopicMetadataRefreshErrors},
			{c.configs, st.TopicConfigSyncErrors},
			{c.offsets, st.ConsumerGroupOffsetSyncErrors},
			{c.shares, st.ShareGroupOffsetSyncErrors},
			{c.acls, st.AclSyncErrors},
			{c.scram, st.ScramSyncErrors},
			{c.scramUpserted, st.ScramUpserted},
			{c.scramDeleted, st.ScramDeleted},
			{c.quotas, st.QuotaSyncErrors},
			{c.quotasAltered, st.QuotasAltered},
			{c.groupsSkippedActive, st.ActiveGroupsSkipped},
			{c.offsetsSkippedAhead, st.OffsetsSkippedAhead},
		} {
			ch <- prometheus.MustNewConstMetric(m.d, prometheus.CounterValue, float64(m.v), name)
		}
	}
}
