package wire

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// fetchReadAllowed is the check a Fetch's partitions pass
// (reqctx.WithReadAllowed): a follower (a replica id) needs CLUSTER_ACTION
// on the cluster, whatever the topic; a consumer READ on the topic.
func fetchReadAllowed(c authCheck, follower bool) func(topic string) bool {
	if follower {
		ok := c.cluster(opClusterAction)
		return func(string) bool { return ok }
	}
	return func(topic string) bool { return c.allowed(resTopic, topic, opRead) }
}

func isFollowerFetch(req *kmsg.FetchRequest) bool {
	return req.ReplicaID >= 0 || (req.Version >= 15 && req.ReplicaState.ID >= 0)
}

// topicIDAllowed checks op on the topic with id; an id the image does not
// know is left to the service (UNKNOWN_TOPIC_ID).
func topicIDAllowed(c authCheck, img *raftmeta.Image, id [16]byte, op kmsg.ACLOperation) bool {
	t, ok := img.TopicsByID[raftmeta.Uuid(id)]
	return !ok || c.allowed(resTopic, t.Name, op)
}
