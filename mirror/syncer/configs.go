package syncer

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
)

// syncConfigs is the topic config step (metric TopicConfigSyncError):
// every mirrored topic's dynamic configs on the source, minus
// mirror.topic.properties.exclude, are applied to its destination topic;
// destination-side changes to them are overwritten (digest §6). It
// returns the number of failed operations.
func (s *Syncer) syncConfigs(ctx context.Context, v *mirrorView) int {
	if len(v.active) == 0 {
		return 0
	}
	names := slices.Sorted(maps.Keys(v.active))
	srcCfgs, err := s.src.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		s.logger.Warn("could not describe the source topics' configs", "err", err)
		return 1
	}
	dstCfgs, err := s.dst.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		s.logger.Warn("could not describe the mirror topics' configs", "err", err)
		return 1
	}
	failed := 0
	for _, name := range names {
		src, err := srcCfgs.On(name, nil)
		if err == nil {
			err = src.Err
		}
		if err != nil {
			// A deleted source topic is the metadata step's to handle.
			s.logger.Debug("no source configs for a mirror topic", "topic", name, "err", err)
			continue
		}
		dst, err := dstCfgs.On(name, nil)
		if err == nil {
			err = dst.Err
		}
		if err != nil {
			s.logger.Warn("could not describe a mirror topic's configs", "topic", name, "err", err)
			failed++
			continue
		}
		d := diffConfigs(dynamicConfigs(src), dynamicConfigs(dst), v.set.propertyExclude)
		if d.empty() {
			continue
		}
		resp, err := s.dst.AlterTopicConfigs(ctx, d.alterOps(), name)
		if err == nil {
			var r kadm.AlterConfigsResponse
			if r, err = resp.On(name, nil); err == nil && r.Err != nil {
				err = fmt.Errorf("%w: %s", r.Err, r.ErrMessage)
			}
		}
		if err != nil {
			s.logger.Warn("could not apply the source's topic configs", "topic", name, "err", err)
			failed++
			continue
		}
		s.logger.Info("applied the source's topic configs", "topic", name, "set", len(d.set), "deleted", len(d.delete))
		s.c.configs.Add(int64(len(d.set) + len(d.delete)))
	}
	return failed
}
