package wire

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// metadataTopicCache keeps, per listener, the Metadata answer for every
// topic of the newest metadata image a request asked about. The answer
// depends only on the image (immutable: a change is a new image) and on
// the listener, whose endpoints say which brokers are reachable; who may
// see which topic and the authorized operations are applied per request
// to copies of the entries. So a client asking for every topic of a broker
// with 10,000 partitions costs the encoding of the answer, not tens of
// thousands of allocations that the next request repeats (Kafka's
// KRaftMetadataCache likewise answers from its image without rebuilding
// it).
type metadataTopicCache struct {
	mu         sync.Mutex
	byListener map[string]*metadataTopics
}

// metadataTopics is every topic of img in name order, as answered on one
// listener. Its entries share the image's replica and ISR slices and are
// never changed: requests append copies.
type metadataTopics struct {
	img    *raftmeta.Image
	topics []kmsg.MetadataResponseTopic
	index  map[string]int // by name
}

// all returns the answer for every topic of img on listener, building it
// when the cached one is of another image.
func (c *metadataTopicCache) all(s *Server, img *raftmeta.Image, listener string, alive map[int32]bool) *metadataTopics {
	if mt := c.current(img, listener); mt != nil {
		return mt
	}
	names := img.TopicNames()
	mt := &metadataTopics{img: img, topics: make([]kmsg.MetadataResponseTopic, len(names)), index: make(map[string]int, len(names))}
	for i, name := range names {
		mt.topics[i] = s.metadataTopic(img.Topics[name], alive)
		mt.index[name] = i
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byListener == nil {
		c.byListener = map[string]*metadataTopics{}
	}
	// A concurrent request may have cached a newer image meanwhile;
	// images only move forward.
	if old := c.byListener[listener]; old == nil || old.img.Offset <= img.Offset {
		c.byListener[listener] = mt
	}
	return mt
}

// one returns the answer for topic t of img: the cached entry when the
// cache holds img, else built for this request alone.
func (c *metadataTopicCache) one(s *Server, img *raftmeta.Image, listener string, alive map[int32]bool, t *raftmeta.Topic) kmsg.MetadataResponseTopic {
	if mt := c.current(img, listener); mt != nil {
		if i, ok := mt.index[t.Name]; ok {
			return mt.topics[i]
		}
	}
	return s.metadataTopic(t, alive)
}

func (c *metadataTopicCache) current(img *raftmeta.Image, listener string) *metadataTopics {
	c.mu.Lock()
	defer c.mu.Unlock()
	if mt := c.byListener[listener]; mt != nil && mt.img == img {
		return mt
	}
	return nil
}

// noReplicas is the offline replicas of a partition whose replicas are
// all reachable; shared because no answer changes it.
var noReplicas = []int32{}

// metadataTopic is topic t's Metadata answer: its partitions with their
// leaders, replicas and ISR (shared with the immutable image), a replica
// on no reachable broker listed offline, and LEADER_NOT_AVAILABLE for a
// partition whose leader is not reachable. AuthorizedOperations is left
// for the request to set.
func (s *Server) metadataTopic(t *raftmeta.Topic, alive map[int32]bool) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = kmsg.StringPtr(t.Name)
	mt.TopicID = t.ID
	mt.IsInternal = s.isInternalTopic(t.Name)
	mt.Partitions = make([]kmsg.MetadataResponseTopicPartition, len(t.Partitions))
	for i, p := range t.Partitions {
		mp := &mt.Partitions[i]
		mp.Default()
		mp.Partition, mp.Leader, mp.LeaderEpoch = p.Index, p.Leader, p.LeaderEpoch
		mp.Replicas, mp.ISR = p.Replicas, p.ISR
		for _, r := range p.Replicas {
			if !alive[r] {
				mp.OfflineReplicas = append(mp.OfflineReplicas, r)
			}
		}
		if mp.OfflineReplicas == nil {
			mp.OfflineReplicas = noReplicas
		}
		if p.Leader < 0 || !alive[p.Leader] {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
	}
	return mt
}
