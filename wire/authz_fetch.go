package wire

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// fetchTopicName is the name of a Fetch topic: its name before v13, the
// name of its id since; "" for an id the image does not know (the replica
// manager answers UNKNOWN_TOPIC_ID).
func fetchTopicName(img *raftmeta.Image, name string, id [16]byte, version int16) string {
	if version < 13 {
		return name
	}
	if t, ok := img.TopicsByID[raftmeta.Uuid(id)]; ok {
		return t.Name
	}
	return ""
}

// fetchReadAllowed reports whether c may read the topic: a follower
// (a replica id) needs CLUSTER_ACTION on the cluster, a consumer READ on
// the topic (KafkaApis.handleFetchRequest).
func fetchReadAllowed(c authCheck, follower bool, name string) bool {
	if follower {
		return c.cluster(opClusterAction)
	}
	return name == "" || c.allowed(resTopic, name, opRead)
}

func isFollowerFetch(req *kmsg.FetchRequest) bool {
	return req.ReplicaID >= 0 || (req.Version >= 15 && req.ReplicaState.ID >= 0)
}

// authorizeFetch takes the topics the client may not read out of the
// request and returns their answers, TOPIC_AUTHORIZATION_FAILED for every
// partition. A request left with nothing to fetch does not wait.
func authorizeFetch(c authCheck, img *raftmeta.Image, req *kmsg.FetchRequest) []kmsg.FetchResponseTopic {
	follower := isFollowerFetch(req)
	var denied []kmsg.FetchResponseTopic
	keep := req.Topics[:0]
	for _, t := range req.Topics {
		if fetchReadAllowed(c, follower, fetchTopicName(img, t.Topic, t.TopicID, req.Version)) {
			keep = append(keep, t)
			continue
		}
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, deniedFetchPartition(p.Partition))
		}
		denied = append(denied, rt)
	}
	req.Topics = keep
	if len(denied) > 0 && len(keep) == 0 {
		req.MaxWaitMillis = 0
	}
	return denied
}

func deniedFetchPartition(p int32) kmsg.FetchResponseTopicPartition {
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.Partition, rp.ErrorCode = p, errTopicAuth
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
	rp.PreferredReadReplica = -1
	return rp
}

// denyFetchedTopics answers TOPIC_AUTHORIZATION_FAILED, without data, for
// the partitions of the response the client may no longer read: those of
// an incremental fetch session that are not in this request, after their
// ACL went away (Kafka authorizes the session's partitions on every
// request, not only the ones the request names).
func denyFetchedTopics(c authCheck, img *raftmeta.Image, req *kmsg.FetchRequest, res *FetchResult) {
	follower := isFollowerFetch(req)
	for i := range res.Resp.Topics {
		t := &res.Resp.Topics[i]
		if fetchReadAllowed(c, follower, fetchTopicName(img, t.Topic, t.TopicID, req.Version)) {
			continue
		}
		for j := range t.Partitions {
			t.Partitions[j] = deniedFetchPartition(t.Partitions[j].Partition)
			if i < len(res.Slices) && j < len(res.Slices[i]) {
				res.Slices[i][j] = storage.FileSlice{}
			}
		}
	}
}

// topicIDAllowed checks op on the topic with id; an id the image does not
// know is left to the service (UNKNOWN_TOPIC_ID).
func topicIDAllowed(c authCheck, img *raftmeta.Image, id [16]byte, op kmsg.ACLOperation) bool {
	t, ok := img.TopicsByID[raftmeta.Uuid(id)]
	return !ok || c.allowed(resTopic, t.Name, op)
}
