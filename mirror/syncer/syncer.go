package syncer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// Config is a Syncer's dependencies.
type Config struct {
	// Mirror is the mirror's name.
	Mirror string
	// Source is a client of the mirror's source cluster, built from the
	// mirror's configs. The Syncer does not close it.
	Source *kgo.Client
	// Destination is a client of the destination cluster (the broker's own
	// listener), built with kgo.MaxVersions(mirrormsg.MaxVersions(nil)) so
	// it can send StartMirrorTopics and StopMirrorTopics. The Syncer does
	// not close it.
	Destination *kgo.Client
	// Image is the destination's newest metadata image: the mirror's
	// configs and which topics it mirrors.
	Image func() *raftmeta.Image
	// Interval is the sync period (mirror.metadata.refresh.interval.ms);
	// zero is DefaultRefreshInterval.
	Interval time.Duration
	// ScramSync writes a SCRAM sync batch on the destination's active
	// controller (the broker forwards SyncScramCredentials); nil leaves
	// the SCRAM step unable to run (reported once when it is enabled).
	ScramSync func(ctx context.Context, req *mirrormsg.SyncScramCredentialsRequest) (*mirrormsg.SyncScramCredentialsResponse, error)
	// StepTimeout bounds one step of a round (zero: 30 s or the interval,
	// whichever is longer).
	StepTimeout time.Duration
	Logger      *slog.Logger
}

// Stats are a Syncer's counters since it was created. The *Errors are
// the prototype's MirrorMetadataManager gauges (digest §8.1), counted per
// failed operation (a topic, a group, an ACL request).
type Stats struct {
	Rounds int64

	TopicMetadataRefreshErrors    int64
	TopicConfigSyncErrors         int64
	ConsumerGroupOffsetSyncErrors int64
	ShareGroupOffsetSyncErrors    int64
	AclSyncErrors                 int64
	// ScramSyncErrors counts failed SCRAM syncs; a condition a retry does
	// not fix (a PLAINTEXT source link, a source that cannot export) once.
	ScramSyncErrors int64

	TopicsStarted     int64
	TopicsStopped     int64
	PartitionsCreated int64
	ConfigsAltered    int64
	OffsetsCommitted  int64
	// ActiveGroupsSkipped counts groups left alone because they had
	// members on the destination (mirror.consumer.offsets.sync.active.groups
	// =skip), once a round each; OffsetsSkippedAhead counts partitions of
	// active groups not synced in forward-only mode because the
	// destination's committed offset was not behind.
	ActiveGroupsSkipped int64
	OffsetsSkippedAhead int64
	// ShareOffsetsAltered counts share-partition start offsets set on
	// the destination (AlterShareGroupOffsets).
	ShareOffsetsAltered int64
	AclsCreated         int64
	AclsDeleted         int64
	ScramUpserted       int64
	ScramDeleted        int64
	// QuotaSyncErrors counts failed client quota operations, QuotasAltered
	// the destination quota entities altered (quotas.go).
	QuotaSyncErrors int64
	QuotasAltered   int64
}

// Add returns the sum of s and o (a broker adds up the Stats of a
// mirror's successive syncers).
func (s Stats) Add(o Stats) Stats {
	return Stats{
		Rounds:                        s.Rounds + o.Rounds,
		TopicMetadataRefreshErrors:    s.TopicMetadataRefreshErrors + o.TopicMetadataRefreshErrors,
		TopicConfigSyncErrors:         s.TopicConfigSyncErrors + o.TopicConfigSyncErrors,
		ConsumerGroupOffsetSyncErrors: s.ConsumerGroupOffsetSyncErrors + o.ConsumerGroupOffsetSyncErrors,
		ShareGroupOffsetSyncErrors:    s.ShareGroupOffsetSyncErrors + o.ShareGroupOffsetSyncErrors,
		AclSyncErrors:                 s.AclSyncErrors + o.AclSyncErrors,
		TopicsStarted:                 s.TopicsStarted + o.TopicsStarted,
		TopicsStopped:                 s.TopicsStopped + o.TopicsStopped,
		PartitionsCreated:             s.PartitionsCreated + o.PartitionsCreated,
		ConfigsAltered:                s.ConfigsAltered + o.ConfigsAltered,
		OffsetsCommitted:              s.OffsetsCommitted + o.OffsetsCommitted,
		ActiveGroupsSkipped:           s.ActiveGroupsSkipped + o.ActiveGroupsSkipped,
		OffsetsSkippedAhead:           s.OffsetsSkippedAhead + o.OffsetsSkippedAhead,
		ShareOffsetsAltered:           s.ShareOffsetsAltered + o.ShareOffsetsAltered,
		AclsCreated:                   s.AclsCreated + o.AclsCreated,
		AclsDeleted:                   s.AclsDeleted + o.AclsDeleted,
		ScramSyncErrors:               s.ScramSyncErrors + o.ScramSyncErrors,
		ScramUpserted:                 s.ScramUpserted + o.ScramUpserted,
		ScramDeleted:                  s.ScramDeleted + o.ScramDeleted,
		QuotaSyncErrors:               s.QuotaSyncErrors + o.QuotaSyncErrors,
		QuotasAltered:                 s.QuotasAltered + o.QuotasAltered,
	}
}

// counters are Stats as atomics, read by Stats while a round runs.
type counters struct {
	rounds                                                             atomic.Int64
	metadataErrors, configErrors, offsetErrors, shareErrors, aclErrors atomic.Int64
	started, stopped, partitions, configs, offsets, shareOffsets       atomic.Int64
	aclsAdd, aclsDel                                                   atomic.Int64
	scramErrors, scramUpserted, scramDeleted                           atomic.Int64
	quotaErrors, quotasAltered                                         atomic.Int64
	groupsSkippedActive, offsetsSkippedAhead                           atomic.Int64
}

// Syncer synchronises one mirror's metadata from its source; see the
// package doc.
type Syncer struct {
	cfg    Config
	src    *kadm.Client
	dst    *kadm.Client
	mirror *admin.Client
	logger *slog.Logger
	c      counters

	// aclMu guards owned: the destination ACLs this syncer created or
	// found as it would have created them (planACLs), the only ones it
	// deletes.
	aclMu sync.Mutex
	owned map[aclEntry]bool

	// scramMu guards scramStatus, the SCRAM step's standing error.
	scramMu     sync.Mutex
	scramStatus string
	// scramUnsupportedUntil is when a source found unable to export
	// SCRAM credentials is asked again (only the round's goroutine uses
	// it).
	scramUnsupportedUntil time.Time

	// skipMu guards skipped, the last consumer group step's skipped
	// offsets (Skipped).
	skipMu  sync.Mutex
	skipped []SkippedOffset

	// groupMu runs the consumer group rounds, periodic and on demand
	// (SyncGroupsNow), one at a time; lastGroupSync is when one over
	// mirror topics last completed without a failure (ms, 0 never).
	groupMu       sync.Mutex
	lastGroupSync atomic.Int64

	// missing counts the consecutive rounds each mirror topic was not
	// found on the source (only the round's goroutine uses it).
	missing map[string]int
}

// New returns a Syncer; Run starts it.
func New(cfg Config) (*Syncer, error) {
	if cfg.Mirror == "" || cfg.Source == nil || cfg.Destination == nil || cfg.Image == nil {
		return nil, errors.New("syncer: Mirror, Source, Destination and Image are required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultRefreshInterval
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = max(30*time.Second, cfg.Interval)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Syncer{
		cfg:     cfg,
		src:     kadm.NewClient(cfg.Source),
		dst:     kadm.NewClient(cfg.Destination),
		mirror:  admin.Wrap(cfg.Destination),
		missing: map[string]int{},
		logger:  cfg.Logger.With("mirror", cfg.Mirror, "component", "mirror-syncer"),
	}, nil
}

// Stats returns the counters.
func (s *Syncer) Stats() Stats {
	c := &s.c
	return Stats{
		Rounds:                        c.rounds.Load(),
		TopicMetadataRefreshErrors:    c.metadataErrors.Load(),
		TopicConfigSyncErrors:         c.configErrors.Load(),
		ConsumerGroupOffsetSyncErrors: c.offsetErrors.Load(),
		ShareGroupOffsetSyncErrors:    c.shareErrors.Load(),
		AclSyncErrors:                 c.aclErrors.Load(),
		TopicsStarted:                 c.started.Load(),
		TopicsStopped:                 c.stopped.Load(),
		PartitionsCreated:             c.partitions.Load(),
		ConfigsAltered:                c.configs.Load(),
		OffsetsCommitted:              c.offsets.Load(),
		ActiveGroupsSkipped:           c.groupsSkippedActive.Load(),
		OffsetsSkippedAhead:           c.offsetsSkippedAhead.Load(),
		ShareOffsetsAltered:           c.shareOffsets.Load(),
		AclsCreated:                   c.aclsAdd.Load(),
		AclsDeleted:                   c.aclsDel.Load(),
		ScramSyncErrors:               c.scramErrors.Load(),
		ScramUpserted:                 c.scramUpserted.Load(),
		QuotaSyncErrors:               c.quotaErrors.Load(),
		QuotasAltered:                 c.quotasAltered.Load(),
		ScramDeleted:                  c.scramDeleted.Load(),
	}
}

// Run syncs at once and then every Interval until ctx ends.
func (s *Syncer) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		s.SyncOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// mirrorView is what a round knows of the mirror on the destination.
type mirrorView struct {
	img *raftmeta.Image
	set settings
	// active are the mirror's topics asked to mirror (not paused, not
	// stopped): the only topics a round writes to.
	active map[string]*raftmeta.Topic
}

// view is what a round may touch of img: the mirror's topics asked to
// mirror.
func (s *Syncer) view(img *raftmeta.Image) *mirrorView {
	v := &mirrorView{img: img, active: map[string]*raftmeta.Topic{}}
	for _, mt := range img.MirrorTopics(s.cfg.Mirror) {
		if mt.Desired == partition.DesiredStart {
			v.active[mt.Topic.Name] = mt.Topic
		}
	}
	return v
}

// SyncOnce runs one round: every step, each independent of the others.
func (s *Syncer) SyncOnce(ctx context.Context) {
	img := s.cfg.Image()
	if _, ok := img.Mirrors[s.cfg.Mirror]; !ok {
		return
	}
	s.c.rounds.Add(1)
	set, err := parseSettings(img.MirrorConfig(s.cfg.Mirror))
	if err != nil {
		// raftmeta validated the configs; a failure is a value this
		// version reads differently. Count it everywhere: nothing syncs.
		s.logger.Error("mirror configs unusable for metadata sync", "err", err)
		s.c.metadataErrors.Add(1)
		s.c.configErrors.Add(1)
		s.c.offsetErrors.Add(1)
		s.c.shareErrors.Add(1)
		s.c.aclErrors.Add(1)
		s.c.scramErrors.Add(1)
		s.c.quotaErrors.Add(1)
		return
	}
	v := s.view(img)
	v.set = set
	steps := []struct {
		name string
		run  func(context.Context, *mirrorView) int
		errs *atomic.Int64
	}{
		{"topic metadata", s.syncTopics, &s.c.metadataErrors},
		{"topic configs", s.syncConfigs, &s.c.configErrors},
		{"consumer group offsets", s.syncGroups, &s.c.offsetErrors},
		{"share group offsets", s.syncShareGroups, &s.c.shareErrors},
		{"ACLs", s.syncACLs, &s.c.aclErrors},
		{"SCRAM credentials", s.syncScram, &s.c.scramErrors},
		{"client quotas", s.syncQuotas, &s.c.quotaErrors},
	}
	for _, st := range steps {
		if ctx.Err() != nil {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, s.cfg.StepTimeout)
		failed := st.run(sctx, v)
		cancel()
		if failed > 0 && ctx.Err() == nil {
			// Each failure was logged where it happened.
			st.errs.Add(int64(failed))
			s.logger.Debug("mirror metadata sync step had failures", "step", st.name, "failures", failed)
		}
	}
}
