package broker

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// DeleteMirror: v0, forwarded to the controller after the check only the
// brokers can make.
//
// Behavior:
//   - The controller refuses a mirror any topic still mirrors (desired
//     state), but cannot see a stop still under way: the broker first
//     describes the mirror's partitions (as DescribeMirrors does, from
//     their leaders) and refuses with CLUSTER_MIRROR_NOT_EMPTY, naming the
//     topics, while any partition has not got to the end of its stop
//     (the seed's "only when no topic is mirroring"): every state but
//     STOPPED, FAILED and UNKNOWN. A partition whose leader does not
//     answer (UNKNOWN) does not hold the deletion up.
//   - Once the controller removed the mirror, every broker deletes the
//     mirror's records from the __mirror_state partitions it leads as the
//     removal reaches it (Node.onMirrorsDeleted), best effort.
func (s mirrorService) DeleteMirror(ctx context.Context, req *mirrormsg.DeleteMirrorRequest) *mirrormsg.DeleteMirrorResponse {
	desc := mirrormsg.NewPtrDescribeMirrorsRequest()
	desc.MirrorNames = []string{req.MirrorName}
	d := s.DescribeMirrors(ctx, desc)
	var stopping []string
	for _, m := range d.Mirrors {
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				if stopUnderWay(p.State) {
					stopping = append(stopping, t.TopicName)
					break
				}
			}
		}
	}
	if len(stopping) > 0 && d.ErrorCode == 0 {
		resp := req.ResponseKind().(*mirrormsg.DeleteMirrorResponse)
		resp.ErrorCode = mirrormsg.ClusterMirrorNotEmpty.Code
		resp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Cluster mirror '%s' still has %d topic(s) being stopped: %s.",
			req.MirrorName, len(stopping), strings.Join(stopping, ", ")))
		return resp
	}
	return s.n.forward(ctx, req).(*mirrormsg.DeleteMirrorResponse)
}

// stopUnderWay reports whether a partition in state (as DescribeMirrors
// names it) may still write its mirror state record.
func stopUnderWay(state string) bool {
	switch state {
	case partition.StateStopped.String(), partition.StateFailed.String(), partition.StateUnknown.String():
		return false
	}
	return true
}
