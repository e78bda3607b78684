package broker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/wire"
)

// mirrorService is wire.MirrorService (KIP-1279's RPCs, keys 9400-9414):
// the admin RPCs are forwarded to the active controller as the other
// admin requests are (Kafka's ForwardingManager), after the broker did
// what the controller cannot (resolving StartMirrorTopics' patterns
// against the source, mirror_start.go; deleting a mirror's records,
// mirror_states.go); ListMirrors and DescribeMirrors answer from this
// broker's image, DescribeMirrors asking the other brokers for the
// partitions they lead (mirror_describe.go); the __mirror_state RPCs go to
// this broker's coordinator.
type mirrorService struct{ n *Node }

var _ wire.MirrorService = mirrorService{}

// CreateMirror refuses a mirror whose source is this cluster (its
// bootstrap servers are listeners of this cluster, or the source answers
// with this cluster's id: INVALID_CONFIG, mirror_self.go) and forwards the
// rest to the controller.
func (s mirrorService) CreateMirror(ctx context.Context, req *mirrormsg.CreateMirrorRequest) *mirrormsg.CreateMirrorResponse {
	cfgs := make(map[string]string, len(req.Config))
	for _, c := range req.Config {
		if c.Value != nil {
			cfgs[c.Name] = *c.Value
		}
	}
	if e := s.n.checkNotSelf(ctx, req.MirrorName, cfgs, true); e != nil {
		resp := req.ResponseKind().(*mirrormsg.CreateMirrorResponse)
		resp.ErrorCode, resp.ErrorMessage = e.code, kmsg.StringPtr(e.msg)
		return resp
	}
	return s.n.forward(ctx, req).(*mirrormsg.CreateMirrorResponse)
}

// StopMirrorTopics applies the RPO guard (mirror_rpo.go: a stop with a
// topic whose lag is over the stop's bound is refused whole, here) and
// forwards the stop otherwise.
func (s mirrorService) StopMirrorTopics(ctx context.Context, req *mirrormsg.StopMirrorTopicsRequest) *mirrormsg.StopMirrorTopicsResponse {
	if refused := s.guardFailoverLag(ctx, req); len(refused) > 0 {
		resp := req.ResponseKind().(*mirrormsg.StopMirrorTopicsResponse)
		resp.MirrorName, resp.Topics = req.MirrorName, refused
		return resp
	}
	return s.n.forward(ctx, req).(*mirrormsg.StopMirrorTopicsResponse)
}

func (s mirrorService) PauseMirrorTopics(ctx context.Context, req *mirrormsg.PauseMirrorTopicsRequest) *mirrormsg.PauseMirrorTopicsResponse {
	return s.n.forward(ctx, req).(*mirrormsg.PauseMirrorTopicsResponse)
}

func (s mirrorService) ResumeMirrorTopics(ctx context.Context, req *mirrormsg.ResumeMirrorTopicsRequest) *mirrormsg.ResumeMirrorTopicsResponse {
	return s.n.forward(ctx, req).(*mirrormsg.ResumeMirrorTopicsResponse)
}

func (s mirrorService) BumpLeaderEpochs(ctx context.Context, req *mirrormsg.BumpLeaderEpochsRequest) *mirrormsg.BumpLeaderEpochsResponse {
	return s.n.forward(ctx, req).(*mirrormsg.BumpLeaderEpochsResponse)
}

func (s mirrorService) ListMirrors(_ context.Context, req *mirrormsg.ListMirrorsRequest) *mirrormsg.ListMirrorsResponse {
	return raftmeta.ListMirrors(s.n.quorum.Image(), req)
}

func (s mirrorService) ReadMirrorStates(ctx context.Context, req *mirrormsg.ReadMirrorStatesRequest) *mirrormsg.ReadMirrorStatesResponse {
	return s.n.mirrorStates.ReadMirrorStates(ctx, req)
}

func (s mirrorService) WriteMirrorStates(ctx context.Context, req *mirrormsg.WriteMirrorStatesRequest) *mirrormsg.WriteMirrorStatesResponse {
	return s.n.mirrorStates.WriteMirrorStates(ctx, req)
}
