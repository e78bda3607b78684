package wire

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// readCheck is the check a Fetch's or ShareFetch's partitions pass
// (reqctx.WithReadAllowed): a follower (a replica id) needs CLUSTER_ACTION
// on the cluster, whatever the topic; a consumer READ on the topic. A
// topic id the image does not know passes, to be answered
// UNKNOWN_TOPIC_ID.
func (s *Server) readCheck(c authCheck, follower bool) reqctx.ReadCheck {
	if follower {
		ok := c.cluster(opClusterAction)
		return func(string, [16]byte) bool { return ok }
	}
	img := s.svc.Cluster.Image()
	return func(topic string, id [16]byte) bool {
		if topic == "" {
			t, ok := img.TopicsByID[raftmeta.Uuid(id)]
			if !ok {
				return true
			}
			topic = t.Name
		}
		return c.allowed(resTopic, topic, opRead)
	}
}

func isFollowerFetch(req *kmsg.FetchRequest) bool {
	return req.ReplicaID >= 0 || (req.Version >= 15 && req.ReplicaState.ID >= 0)
}
