package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// CreateMirror creates the mirror name with its configs: the source
// cluster's client settings (bootstrap.servers at least) and mirror.*
// keys (digest §5.1). Configs are sent sorted by key. The broker rejects
// unknown keys with INVALID_CONFIG and an existing name with
// CLUSTER_MIRROR_ALREADY_EXISTS.
//
// Unlike CreateTopics, CreateMirrorRequest has no ValidateOnly field (the
// prototype's schema, digest §2.2), so there is no validate-only mode.
func (c *Client) CreateMirror(ctx context.Context, name string, configs map[string]string) error {
	req := mirrormsg.NewPtrCreateMirrorRequest()
	req.MirrorName = name
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		cfg := mirrormsg.NewCreateMirrorRequestMirrorConfig()
		cfg.Name = k
		v := configs[k]
		cfg.Value = &v
		req.Config = append(req.Config, cfg)
	}
	resp, err := send(ctx, c.cl, req, isWrite, func(r *mirrormsg.CreateMirrorResponse) int16 { return r.ErrorCode })
	if err != nil {
		return fmt.Errorf("CreateMirror %s: %w", name, err)
	}
	if err := codeError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return fmt.Errorf("CreateMirror %s: %w", name, err)
	}
	return nil
}

// DeleteMirror deletes the mirror name. The broker refuses with
// CLUSTER_MIRROR_NOT_EMPTY while a topic of the mirror is not STOPPED.
func (c *Client) DeleteMirror(ctx context.Context, name string) error {
	req := mirrormsg.NewPtrDeleteMirrorRequest()
	req.MirrorName = name
	resp, err := send(ctx, c.cl, req, isWrite, func(r *mirrormsg.DeleteMirrorResponse) int16 { return r.ErrorCode })
	if err != nil {
		return fmt.Errorf("DeleteMirror %s: %w", name, err)
	}
	if err := codeError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return fmt.Errorf("DeleteMirror %s: %w", name, err)
	}
	return nil
}

// ListedMirror is one mirror of ListMirrors (ListMirrorsResponse's
// ListedMirror).
type ListedMirror struct {
	Name            string `json:"name"`
	SourceBootstrap string `json:"source_bootstrap"`
	// SourceClusterID is "" until the destination has resolved it.
	SourceClusterID string `json:"source_cluster_id"`
	// TopicCount is the number of topics of the mirror; 0 for an empty one.
	TopicCount int32 `json:"topic_count"`
}

// ListMirrors lists every mirror of the cluster, sorted by name.
func (c *Client) ListMirrors(ctx context.Context) ([]ListedMirror, error) {
	req := mirrormsg.NewPtrListMirrorsRequest()
	resp, err := send(ctx, c.cl, req, isRead, func(r *mirrormsg.ListMirrorsResponse) int16 { return r.ErrorCode })
	if err != nil {
		return nil, fmt.Errorf("ListMirrors: %w", err)
	}
	if err := codeError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		return nil, fmt.Errorf("ListMirrors: %w", err)
	}
	out := make([]ListedMirror, 0, len(resp.Mirrors))
	for _, m := range resp.Mirrors {
		out = append(out, ListedMirror{
			Name:            m.MirrorName,
			SourceBootstrap: m.SourceBootstrap,
			SourceClusterID: m.SourceClusterID,
			TopicCount:      m.TopicCount,
		})
	}
	slices.SortFunc(out, func(a, b ListedMirror) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
