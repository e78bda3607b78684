package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/state"
	"github.com/strait-io/strait/mirror/syncer"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// syncGroupsForwardSlack is what a forwarding broker adds to the round's
// own timeout before it gives up on the syncer's broker.
const syncGroupsForwardSlack = 5 * time.Second

// SyncMirrorGroupOffsets (issue 27's promotion barrier, key 9414) runs one
// consumer group offset round of the mirror's syncer now. Only the broker
// running the syncer can (it holds the source client, the filters' state
// and serializes the rounds), so, as a group request goes to the group's
// coordinator, a broker that does not run it forwards the request to the
// leader of the mirror's __mirror_state partition, where the syncer runs
// (mirror_syncer.go), once: LocalOnly marks the forwarded request, and a
// broker that does not run the syncer answers it NOT_COORDINATOR.
func (s mirrorService) SyncMirrorGroupOffsets(ctx context.Context, req *mirrormsg.SyncMirrorGroupOffsetsRequest) *mirrormsg.SyncMirrorGroupOffsetsResponse {
	n := s.n
	resp := req.ResponseKind().(*mirrormsg.SyncMirrorGroupOffsetsResponse)
	resp.MirrorName = req.MirrorName
	fail := func(e *kerr.Error, msg string) *mirrormsg.SyncMirrorGroupOffsetsResponse {
		resp.ErrorCode, resp.ErrorMessage = e.Code, &msg
		return resp
	}
	img := n.quorum.Image()
	if _, ok := img.Mirrors[req.MirrorName]; !ok {
		return fail(mirrormsg.UnknownClusterMirror, fmt.Sprintf("mirror %s does not exist", req.MirrorName))
	}
	timeout := time.Duration(req.TimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if sy, running := n.syncers.syncer(req.MirrorName); running {
		if sy == nil {
			return fail(kerr.InvalidConfig, fmt.Sprintf("the syncer of mirror %s cannot run with its configs (see the broker's log)", req.MirrorName))
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		groups, err := sy.SyncGroupsNow(rctx, req.Topics)
		resp.SyncerBrokerID = n.cfg.NodeID
		if t := sy.LastGroupSync(); !t.IsZero() {
			resp.LastGroupSyncMs = t.UnixMilli()
		}
		for _, g := range groups {
			resp.Groups = append(resp.Groups, groupSyncResult(g))
		}
		if err != nil {
			code, msg := syncErrorCode(err), err.Error()
			resp.ErrorCode, resp.ErrorMessage = code, &msg
		}
		return resp
	}
	if req.LocalOnly {
		return fail(kerr.NotCoordinator, fmt.Sprintf("broker %d does not run the syncer of mirror %s", n.cfg.NodeID, req.MirrorName))
	}
	leader := syncerBroker(img, req.MirrorName)
	if leader < 0 || leader == n.cfg.NodeID {
		// No leader, or this broker leads but has not started the
		// syncer yet: the client retries.
		return fail(kerr.CoordinatorNotAvailable, fmt.Sprintf("the syncer of mirror %s is not running (its __mirror_state partition has no leader, or it is starting)", req.MirrorName))
	}
	fwd := *req
	fwd.LocalOnly = true
	fctx, cancel := context.WithTimeout(ctx, timeout+syncGroupsForwardSlack)
	defer cancel()
	kresp, err := n.peers.request(fctx, leader, &fwd)
	if err != nil {
		return fail(kerr.CoordinatorNotAvailable, fmt.Sprintf("the broker running the syncer of mirror %s (%d) did not answer: %v", req.MirrorName, leader, err))
	}
	return kresp.(*mirrormsg.SyncMirrorGroupOffsetsResponse)
}

// syncerBroker is the broker that runs mirror's syncer in img: the
// leader of its __mirror_state partition, -1 if none.
func syncerBroker(img *raftmeta.Image, mirror string) int32 {
	t, ok := img.Topics[raftmeta.MirrorStateTopic]
	if !ok || len(t.Partitions) == 0 {
		return -1
	}
	p, ok := img.Partition(raftmeta.MirrorStateTopic, state.PartitionForMirror(mirror, int32(len(t.Partitions))))
	if !ok {
		return -1
	}
	return p.Leader
}

// groupSyncResult is a syncer's group outcome on the wire.
func groupSyncResult(g syncer.GroupSync) mirrormsg.SyncMirrorGroupOffsetsResponseGroup {
	r := mirrormsg.NewSyncMirrorGroupOffsetsResponseGroup()
	r.GroupID = g.Group
	if g.Skipped != "" {
		reason := string(g.Skipped)
		r.SkipReason = &reason
	}
	if g.Err != nil {
		msg := g.Err.Error()
		r.ErrorCode, r.ErrorMessage = syncErrorCode(g.Err), &msg
	}
	for _, p := range g.Partitions {
		rp := mirrormsg.NewSyncMirrorGroupOffsetsResponsePartition()
		rp.TopicName, rp.PartitionIndex = p.Topic, p.Partition
		rp.SourceOffset, rp.CommittedOffset, rp.Outcome = p.Source, p.Committed, string(p.Outcome)
		r.Partitions = append(r.Partitions, rp)
	}
	return r
}

// syncErrorCode is the Kafka error code of a sync failure: the Kafka
// error it carries (the source's or the destination's answer), else
// REQUEST_TIMED_OUT for a round out of time, NETWORK_EXCEPTION for a
// source that did not answer, UNKNOWN_SERVER_ERROR for the rest.
func syncErrorCode(err error) int16 {
	var ke *kerr.Error
	var se *syncer.SourceError
	switch {
	case errors.As(err, &ke):
		return ke.Code
	case errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut.Code
	case errors.As(err, &se):
		return kerr.NetworkException.Code
	}
	return kerr.UnknownServerError.Code
}
