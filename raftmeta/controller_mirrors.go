package raftmeta

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/raftmeta/mirrorstate"
)

// The controller side of KIP-1279 cluster mirrors (the seed's "The
// controller saves the properties into the metadata log as ConfigRecord
// entries with type MIRROR"): creating and deleting mirrors here, the
// topics' mirror.name in controller_mirrors_topics.go, leader epoch bumps
// in controller_mirrors_epochs.go. The methods take and return the
// mirrormsg messages, with errors as Kafka error codes (mirrormsg's for the
// KIP's, kerr's otherwise), in the shape of wire.MirrorService.

// serveMirrorRequest answers the mirror requests of the controller
// channel; nil for another request.
func (c *mirrorControl) serveMirrorRequest(ctx context.Context, req kmsg.Request) kmsg.Response {
	switch req := req.(type) {
	case *mirrormsg.CreateMirrorRequest:
		return c.CreateMirror(ctx, req)
	case *mirrormsg.DeleteMirrorRequest:
		return c.DeleteMirror(ctx, req)
	case *mirrormsg.ListMirrorsRequest:
		return c.ListMirrors(ctx, req)
	case *mirrormsg.DescribeMirrorsRequest:
		return c.DescribeMirrors(ctx, req)
	case *mirrormsg.StartMirrorTopicsRequest:
		return c.StartMirrorTopics(ctx, req)
	case *mirrormsg.StopMirrorTopicsRequest:
		return c.StopMirrorTopics(ctx, req)
	case *mirrormsg.PauseMirrorTopicsRequest:
		return c.PauseMirrorTopics(ctx, req)
	case *mirrormsg.ResumeMirrorTopicsRequest:
		return c.ResumeMirrorTopics(ctx, req)
	case *mirrormsg.BumpLeaderEpochsRequest:
		return c.BumpLeaderEpochs(ctx, req)
	case *mirrormsg.SyncScramCredentialsRequest:
		return c.scram.SyncScramCredentials(ctx, req)
	}
	return nil
}

// CreateMirror: v0 (the seed's CreateMirror flow).
//
// Behavior:
//   - The name must pass ValidateMirrorName (topic-name rules, no .paused
//     or .removed suffix): INVALID_REQUEST. An existing name is
//     CLUSTER_MIRROR_ALREADY_EXISTS.
//   - A config key given twice is INVALID_REQUEST; a null value, an
//     unknown or refused key, a class name, a file path, a bad value or a
//     missing bootstrap.servers is INVALID_CONFIG (ValidateMirrorConfigs).
//   - Appends a MirrorRecord with a new mirror id and the controller's
//     time, then a MIRROR ConfigRecord per key. With the first mirror it
//     also creates __mirror_state (MirrorStateTopicPartitions partitions,
//     replication factor MirrorStateTopicReplicationFactor lowered only to
//     the registered brokers (Image.InternalTopicReplicationFactor),
//     cleanup.policy=compact), as the seed's step 4 says;
//     if that topic cannot be placed the mirror is not created either.
//   - The request has no ValidateOnly field (the prototype's schema).
func (c *mirrorControl) CreateMirror(ctx context.Context, req *mirrormsg.CreateMirrorRequest) *mirrormsg.CreateMirrorResponse {
	resp := req.ResponseKind().(*mirrormsg.CreateMirrorResponse)
	fail := func(e *apiError) *mirrormsg.CreateMirrorResponse {
		resp.ErrorCode, resp.ErrorMessage = e.code, e.message()
		return resp
	}
	if err := ValidateMirrorName(req.MirrorName); err != nil {
		return fail(errorf(kerr.InvalidRequest, "%s", err.Error()))
	}
	configs := map[string]string{}
	var names, nulls []string
	for _, cfg := range req.Config {
		names = append(names, cfg.Name)
		if cfg.Value == nil {
			nulls = append(nulls, cfg.Name)
			continue
		}
		configs[cfg.Name] = *cfg.Value
	}
	switch {
	case duplicateKeys(names):
		return fail(errorf(kerr.InvalidRequest, "Error due to duplicate config keys"))
	case len(nulls) > 0:
		return fail(errorf(kerr.InvalidConfig, "Null value not supported for mirror configs: %s", strings.Join(nulls, ",")))
	}
	if err := ValidateMirrorConfigs(configs); err != nil {
		return fail(errorf(kerr.InvalidConfig, "%s", err.Error()))
	}

	var e *apiError
	built := false
	err := c.write(ctx, func(img *Image) []Record {
		built = true
		if _, ok := img.Mirrors[req.MirrorName]; ok {
			e = errorf(mirrormsg.ClusterMirrorAlreadyExists, "Cluster mirror '%s' already exists.", req.MirrorName)
			return nil
		}
		id, err := c.newUuid(func(u Uuid) bool {
			for _, m := range img.Mirrors {
				if m.ID == u {
					return true
				}
			}
			return false
		})
		if err != nil {
			e = errorf(kerr.UnknownServerError, "%s", err.Error())
			return nil
		}
		records := []Record{&MirrorRecord{Name: req.MirrorName, MirrorID: id, CreateTimeMs: c.cfg.Clock.Now().UnixMilli()}}
		for _, k := range slices.Sorted(maps.Keys(configs)) {
			records = append(records, &ConfigRecord{ResourceType: ConfigResourceMirror, ResourceName: req.MirrorName, Name: k, Value: strp(configs[k])})
		}
		if _, ok := img.Topics[MirrorStateTopic]; !ok {
			recs, te := c.mirrorStateTopicRecords(img)
			if te != nil {
				e = te
				return nil
			}
			records = append(records, recs...)
		}
		return records
	})
	switch {
	case e != nil:
		return fail(e)
	case err != nil || !built:
		return fail(writeError(err))
	}
	return resp
}

// mirrorStateTopicRecords creates __mirror_state.
func (c *mirrorControl) mirrorStateTopicRecords(img *Image) ([]Record, *apiError) {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = MirrorStateTopic
	rt.NumPartitions = c.cfg.MirrorStateTopicPartitions
	rt.ReplicationFactor = img.InternalTopicReplicationFactor(c.cfg.MirrorStateTopicReplicationFactor)
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name, cfg.Value = "cleanup.policy", strp("compact")
	rt.Configs = append(rt.Configs, cfg)
	recs, e := c.replication.createTopicWithID(img, &rt, map[string]string{}, Uuid{})
	if e != nil {
		return nil, &apiError{code: e.code, msg: "Creating " + MirrorStateTopic + " with the first mirror: " + e.msg}
	}
	return recs, nil
}

// DeleteMirror: v0.
//
// Behavior:
//   - An unknown mirror is UNKNOWN_CLUSTER_MIRROR.
//   - A mirror any topic still mirrors (mirror.name "<mirror>" or
//     "<mirror>.paused") is CLUSTER_MIRROR_NOT_EMPTY, naming the topics:
//     the seed's "only when no topic is mirroring". The controller sees
//     desired states only; a stop still under way (STOPPING) is the
//     broker's to refuse before forwarding.
//   - Appends a RemoveMirrorRecord, which drops the mirror's configs.
//     Stopped topics keep "<mirror>.removed": it tells their brokers the
//     topic stays stopped (clearing it would make them DesiredNone), and a
//     mirror created again under the name can start them again.
func (c *mirrorControl) DeleteMirror(ctx context.Context, req *mirrormsg.DeleteMirrorRequest) *mirrormsg.DeleteMirrorResponse {
	resp := req.ResponseKind().(*mirrormsg.DeleteMirrorResponse)
	var e *apiError
	built := false
	err := c.write(ctx, func(img *Image) []Record {
		built = true
		m, ok := img.Mirrors[req.MirrorName]
		if !ok {
			e = errorf(mirrormsg.UnknownClusterMirror, "Cluster mirror '%s' does not exist.", req.MirrorName)
			return nil
		}
		var busy []string
		for _, mt := range img.MirrorTopics(m.Name) {
			if mt.Desired != mirrorstate.DesiredStop {
				busy = append(busy, mt.Topic.Name)
			}
		}
		if len(busy) > 0 {
			e = errorf(mirrormsg.ClusterMirrorNotEmpty, "Cluster mirror '%s' still has %d topic(s) not stopped: %s.", m.Name, len(busy), listSome(busy, 10))
			return nil
		}
		return []Record{&RemoveMirrorRecord{MirrorID: m.ID}}
	})
	if e == nil && (err != nil || !built) {
		e = writeError(err)
	}
	if e != nil {
		resp.ErrorCode, resp.ErrorMessage = e.code, e.message()
	}
	return resp
}

// listSome joins up to n names, then says how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// readImage is the image a read on the controller channel answers from:
// the active controller's, once it has applied every committed entry, so
// a forwarded read sees every write acknowledged before it. Brokers
// answer from their own image with the functions ListMirrors and
// DescribeMirrors instead.
func (c *mirrorControl) readImage(ctx context.Context) (*Image, *apiError) {
	if !c.log.IsLeader() {
		return nil, writeError(ErrNotController)
	}
	if err := c.log.Sync(ctx); err != nil {
		return nil, writeError(err)
	}
	return c.log.Image(), nil
}

// ListMirrors answers ListMirrors on the controller channel (see
// readImage); NOT_CONTROLLER elsewhere.
func (c *mirrorControl) ListMirrors(ctx context.Context, req *mirrormsg.ListMirrorsRequest) *mirrormsg.ListMirrorsResponse {
	img, e := c.readImage(ctx)
	if e != nil {
		resp := req.ResponseKind().(*mirrormsg.ListMirrorsResponse)
		resp.ErrorCode, resp.ErrorMessage = e.code, e.message()
		return resp
	}
	return ListMirrors(img, req)
}

// ListMirrors: v0, from an image. Every mirror by name, with its source
// bootstrap.servers and the number of topics whose mirror.name names it,
// stopped ones included. SourceClusterID stays empty: the controller
// cannot reach the source (the brokers' syncer may learn it).
func ListMirrors(img *Image, req *mirrormsg.ListMirrorsRequest) *mirrormsg.ListMirrorsResponse {
	resp := req.ResponseKind().(*mirrormsg.ListMirrorsResponse)
	for _, name := range img.MirrorNames() {
		lm := mirrormsg.NewListMirrorsResponseListedMirror()
		lm.MirrorName = name
		lm.SourceBootstrap = img.MirrorConfig(name)["bootstrap.servers"]
		lm.TopicCount = int32(len(img.MirrorTopics(name)))
		resp.Mirrors = append(resp.Mirrors, lm)
	}
	return resp
}

// DescribeMirrors answers DescribeMirrors on the controller channel (see
// readImage); NOT_CONTROLLER elsewhere.
func (c *mirrorControl) DescribeMirrors(ctx context.Context, req *mirrormsg.DescribeMirrorsRequest) *mirrormsg.DescribeMirrorsResponse {
	img, e := c.readImage(ctx)
	if e != nil {
		resp := req.ResponseKind().(*mirrormsg.DescribeMirrorsResponse)
		resp.ErrorCode, resp.ErrorMessage = e.code, e.message()
		return resp
	}
	return DescribeMirrors(img, req)
}

// DescribeMirrors: v0, from an image: the mirror-level part.
//
// Behavior:
//   - MirrorNames null describes every mirror by name; otherwise each
//     name in request order, an unknown one with UNKNOWN_CLUSTER_MIRROR.
//   - Topics are those whose mirror.name names the mirror (stopped ones
//     included), by name, with no partitions: the partition states, offsets
//     and lag live on the brokers leading them (__mirror_state and their
//     logs), which fill Partitions in. The mirror's configs are not part of
//     this response; DescribeConfigs on the MIRROR resource shows them,
//     secrets as null (DescribeMirrorConfigs).
//   - AuthorizedOperations stays at its default (not requested).
func DescribeMirrors(img *Image, req *mirrormsg.DescribeMirrorsRequest) *mirrormsg.DescribeMirrorsResponse {
	resp := req.ResponseKind().(*mirrormsg.DescribeMirrorsResponse)
	names := req.MirrorNames
	if names == nil {
		names = img.MirrorNames()
	}
	for _, name := range names {
		dm := mirrormsg.NewDescribeMirrorsResponseDescribedMirror()
		dm.MirrorName = name
		if _, ok := img.Mirrors[name]; !ok {
			dm.ErrorCode = mirrormsg.UnknownClusterMirror.Code
			resp.Mirrors = append(resp.Mirrors, dm)
			continue
		}
		for _, mt := range img.MirrorTopics(name) {
			tp := mirrormsg.NewDescribeMirrorsResponseTopicPartitions()
			tp.TopicName = mt.Topic.Name
			dm.Topics = append(dm.Topics, tp)
		}
		resp.Mirrors = append(resp.Mirrors, dm)
	}
	return resp
}
