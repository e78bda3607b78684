package admin

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// MirrorConfigResource is the config resource type of a mirror's configs
// (raftmeta.ConfigResourceMirror, Strait's number for the KIP's
// CLUSTER_MIRROR resource): DescribeConfigs, IncrementalAlterConfigs.
const MirrorConfigResource kmsg.ConfigResourceType = 64

// AddTopicFilters appends patterns to a mirror's mirror.topics.include
// and mirror.topics.exclude (IncrementalAlterConfigs APPEND on the MIRROR
// resource; a pattern already listed is not added twice). The mirror's
// metadata sync then starts the source topics that match an include
// pattern and no exclude pattern (KIP-1279 topic discovery; exclude wins).
// A pattern must be a valid regular expression without a comma (the
// lists are comma-separated).
func (c *Client) AddTopicFilters(ctx context.Context, mirror string, include, exclude []string) error {
	if len(include) == 0 && len(exclude) == 0 {
		return fmt.Errorf("AddTopicFilters %s: no pattern", mirror)
	}
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = MirrorConfigResource, mirror
	for _, kv := range []struct {
		key string
		ps  []string
	}{{"mirror.topics.include", include}, {"mirror.topics.exclude", exclude}} {
		key, ps := kv.key, kv.ps
		if len(ps) == 0 {
			continue
		}
		for _, p := range ps {
			if strings.TrimSpace(p) == "" || strings.Contains(p, ",") {
				return fmt.Errorf("AddTopicFilters %s: pattern %q: empty or with a comma", mirror, p)
			}
		}
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Op, cfg.Value = key, kmsg.IncrementalAlterConfigOpAppend, kmsg.StringPtr(strings.Join(ps, ","))
		res.Configs = append(res.Configs, cfg)
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Resources = append(req.Resources, res)
	resp, err := send(ctx, c.cl, req, isWrite, func(r *kmsg.IncrementalAlterConfigsResponse) int16 {
		if len(r.Resources) != 1 {
			return 0
		}
		return r.Resources[0].ErrorCode
	})
	if err != nil {
		return fmt.Errorf("AddTopicFilters %s: %w", mirror, err)
	}
	if len(resp.Resources) != 1 {
		return fmt.Errorf("AddTopicFilters %s: %d results for 1 resource", mirror, len(resp.Resources))
	}
	if err := codeError(resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage); err != nil {
		return fmt.Errorf("AddTopicFilters %s: %w", mirror, err)
	}
	return nil
}
