package syncer

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// syncTopics is the topic metadata step (the prototype's topic discovery
// and metadata refresh, metric TopicMetadataRefreshError): new source
// topics the filters select start mirroring, partition-count increases
// are applied, and a mirror topic deleted on the source is stopped. It
// returns the number of failed operations.
func (s *Syncer) syncTopics(ctx context.Context, v *mirrorView) int {
	failed := 0
	if v.set.topics.f.IncludesAny() {
		if err := s.discoverTopics(ctx, v); err != nil {
			s.logger.Warn("mirror topic discovery failed", "err", err)
			failed++
		}
	}
	if len(v.active) == 0 {
		return failed
	}
	names := slices.Sorted(maps.Keys(v.active))
	details, err := s.src.ListTopics(ctx, names...)
	if err != nil {
		s.logger.Warn("mirror topic metadata refresh failed", "err", err)
		return failed + 1
	}
	for name := range s.missing {
		if _, ok := v.active[name]; !ok {
			delete(s.missing, name)
		}
	}
	for _, name := range names {
		dst := v.active[name]
		td, ok := details[name]
		if ok && !errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			delete(s.missing, name)
		}
		switch {
		case !ok:
			continue
		case errors.Is(td.Err, kerr.UnknownTopicOrPartition):
			// The source deleted it: the destination topic keeps what it
			// has and becomes writable (digest §6: "the operator would
			// need to manually remove the topic from the mirror"); never
			// silently. A stop cannot be undone by the syncer, so the
			// topic must be missing in two rounds in a row: a source
			// broker that has not caught up with its metadata answers
			// UNKNOWN_TOPIC_OR_PARTITION too.
			if s.missing[name]++; s.missing[name] < 2 {
				s.logger.Info("source topic not found; stopping its mirror topic if it is still missing at the next sync", "topic", name)
				continue
			}
			delete(s.missing, name)
			s.logger.Warn("source topic deleted; stopping its mirror topic", "topic", name)
			rs, err := s.mirror.StopMirrorTopics(ctx, s.cfg.Mirror, name)
			if err == nil && len(rs.Failed()) > 0 {
				err = rs.Failed()[0].Err
			}
			if err != nil {
				s.logger.Warn("could not stop the mirror topic of a deleted source topic", "topic", name, "err", err)
				failed++
				continue
			}
			s.c.stopped.Add(1)
		case td.Err != nil:
			s.logger.Warn("mirror topic metadata refresh failed", "topic", name, "err", td.Err)
			failed++
		case [16]byte(td.ID) != [16]byte(dst.ID):
			// Recreated on the source: the mirror partitions fail on
			// their own (FetchSourceTopicIDChanged); its partitions are
			// not this topic's.
		case len(td.Partitions) > len(dst.Partitions):
			want := len(td.Partitions)
			resp, err := s.dst.UpdatePartitions(ctx, want, name)
			if err == nil {
				err = resp.Error()
			}
			if err != nil {
				s.logger.Warn("could not add the source's new partitions to a mirror topic", "topic", name, "partitions", want, "err", err)
				failed++
				continue
			}
			s.logger.Info("added partitions to a mirror topic", "topic", name, "from", len(dst.Partitions), "to", want)
			s.c.partitions.Add(int64(want - len(dst.Partitions)))
		}
	}
	return failed
}

// discoverTopics starts mirroring the source topics the filters select
// that have no destination topic of their name yet. A destination topic
// of that name, in this mirror (stopped ones included: an operator failed
// it over), in another mirror or in none, is never taken over by
// discovery.
func (s *Syncer) discoverTopics(ctx context.Context, v *mirrorView) error {
	all, err := s.src.ListTopics(ctx)
	if err != nil {
		return err
	}
	var start []string
	for _, name := range all.Names() {
		td := all[name]
		if td.Err != nil || td.IsInternal || !v.set.topics.matches(name) {
			continue
		}
		if _, exists := v.img.Topics[name]; exists {
			continue
		}
		start = append(start, name)
	}
	if len(start) == 0 {
		return nil
	}
	rs, err := s.mirror.StartMirrorTopics(ctx, s.cfg.Mirror, start...)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range rs {
		if r.Err != nil {
			errs = append(errs, errors.New(r.Topic+": "+r.Detail()))
			continue
		}
		s.logger.Info("discovered a source topic; mirroring it", "topic", r.Topic)
		s.c.started.Add(1)
	}
	return errors.Join(errs...)
}
