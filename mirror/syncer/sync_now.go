package syncer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// The promotion barrier's last sync (issue 27): `strait mirror stop`
// pauses the topics, waits until every partition is at rest, and only
// then asks the mirror's syncer for one consumer group round now
// (SyncMirrorGroupOffsets, key 9414), so that offsets committed on the
// source since the last periodic round reach the destination before it
// becomes writable. The round is the periodic one (groupRound): the same
// group filters, the same clamp into the destination's log, whose end at
// rest is the barrier, and the same active-group mode; it differs in its
// topics (those named, paused ones included, where the periodic round
// touches only the topics asked to mirror) and in reporting each group.

// Outcome is what a round did with one partition of a group.
type Outcome string

const (
	// OutcomeSynced: the round committed the source's offset (clamped).
	OutcomeSynced Outcome = "synced"
	// OutcomeUnchanged: the destination already had it.
	OutcomeUnchanged Outcome = "unchanged"
	// OutcomeAhead: forward-only mode, and the destination's committed
	// offset was not behind (SkipAhead).
	OutcomeAhead Outcome = "destination-ahead"
	// OutcomeFailed: the commit failed (GroupSync.Err says why).
	OutcomeFailed Outcome = "failed"
)

// PartitionOffset is one partition of a group in a round.
type PartitionOffset struct {
	Topic     string
	Partition int32
	// Source is the group's committed offset on the source, Target the
	// offset the sync writes for it (syncedOffset: clamped into the
	// destination's log) and Committed the destination's committed
	// offset after the round (-1 none).
	Source, Target, Committed int64
	Outcome                   Outcome
}

// GroupSync is one group's outcome in a round.
type GroupSync struct {
	Group string
	// Skipped is set (SkipGroupActive) when the whole group was left
	// alone.
	Skipped    SkipReason
	Partitions []PartitionOffset
	// Err is the group's failure: fetching its offsets on either
	// cluster, or the commit (the partitions say which).
	Err error
}

// SourceError is a failure to read from the mirror's source cluster.
type SourceError struct {
	Op  string
	Err error
}

func (e *SourceError) Error() string { return fmt.Sprintf("%s: %v", e.Op, e.Err) }
func (e *SourceError) Unwrap() error { return e.Err }

// LastGroupSync is when a consumer group round over mirror topics last
// completed without a failure; zero if none did.
func (s *Syncer) LastGroupSync() time.Time {
	if ms := s.lastGroupSync.Load(); ms > 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}

// SyncGroupsNow runs one consumer group round now over topics (the
// mirror's topics mirroring or paused; none: the topics asked to mirror,
// as the periodic round) and returns each selected source group's
// outcome. The error is the round's: the mirror or a topic is unknown
// (mirrormsg.UnknownClusterMirror, TopicNotInClusterMirror, wrapped),
// the mirror's configs are unusable, or the groups could not be listed
// (a *SourceError when the source's listing failed; the groups the
// source's other brokers listed are still synced and returned).
func (s *Syncer) SyncGroupsNow(ctx context.Context, topics []string) ([]GroupSync, error) {
	img := s.cfg.Image()
	if _, ok := img.Mirrors[s.cfg.Mirror]; !ok {
		return nil, fmt.Errorf("%w: %s", mirrormsg.UnknownClusterMirror, s.cfg.Mirror)
	}
	set, err := parseSettings(img.MirrorConfig(s.cfg.Mirror))
	if err != nil {
		return nil, fmt.Errorf("%w: the mirror's configs are unusable: %v", kerr.InvalidConfig, err)
	}
	v := s.view(img)
	v.set = set
	if topics != nil {
		mts := img.MirrorTopics(s.cfg.Mirror)
		v.active = make(map[string]*raftmeta.Topic, len(topics))
		for _, name := range topics {
			i := slices.IndexFunc(mts, func(mt raftmeta.MirrorTopic) bool { return mt.Topic.Name == name })
			if i < 0 || (mts[i].Desired != partition.DesiredStart && mts[i].Desired != partition.DesiredPause) {
				return nil, fmt.Errorf("%w: %s is not mirroring or paused in mirror %s", mirrormsg.TopicNotInClusterMirror, name, s.cfg.Mirror)
			}
			v.active[name] = mts[i].Topic
		}
	}
	var out []GroupSync
	_, err = s.groupRound(ctx, v, &out)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("the round did not finish in time: %w", err)
	}
	return out, err
}
