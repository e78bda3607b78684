package wire

import (
	"context"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// Metadata: v0-12
//
// Behavior:
// * Brokers are listed with the endpoint of the listener the request came
//   in on (Kafka answers per listener so clients reach the same network).
// * A null topic list (v1+; an empty one in v0) lists every topic.
// * Missing topics are created when the request allows it (v4+; always in
//   earlier versions) and the broker's TopicPolicy auto-creates them
//   (auto.create.topics.enable on, a valid name, not internal); a topic created
//   by this request answers LEADER_NOT_AVAILABLE until its partitions have
//   leaders, which is what clients expect and retry on.
// * Topics may be named by id (v10+); an unknown id is UNKNOWN_TOPIC_ID.
// * Authorized operations are all operations: ACLs are stored but not yet
//   enforced.
//
// Version notes:
// * v1: ControllerID, IsInternal, Rack; null topics means all
// * v2: ClusterID
// * v3: ThrottleMillis
// * v4: AllowAutoTopicCreation
// * v5: OfflineReplicas
// * v7: LeaderEpoch (KIP-320)
// * v8: AuthorizedOperations (KIP-430)
// * v9: flexible versions
// * v10: TopicID (KIP-516)
// * v11: cluster authorized operations removed (KIP-700)

func init() { register(api{key: 3, min: 0, max: 12, handle: (*Server).handleMetadata}) }

// allTopicOperations is the bitfield of every topic ACL operation (READ,
// WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS,
// ALTER_CONFIGS), reported while ACLs are not enforced.
const allTopicOperations = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11

// allClusterOperations is every cluster ACL operation.
const allClusterOperations = 1<<4 | 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12 | 1<<13

func (s *Server) handleMetadata(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	info := reqctx.From(ctx)
	c := s.auth(ctx)
	img := s.svc.Cluster.Image()

	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if !all {
		// A topic this broker does not know may be in metadata it has
		// received but not yet applied: a client that just created it
		// would otherwise be told it is unknown (see raftmeta's CatchUp).
		if namesUnknownTopic(img, req) && s.svc.Cluster.CatchUpMetadata(ctx) {
			img = s.svc.Cluster.Image()
		}
		if missing := s.missingTopics(img, req); len(missing) > 0 && (req.AllowAutoTopicCreation || req.Version < 4) {
			// Auto-creation needs DESCRIBE and CREATE (on the cluster
			// or the topic); a topic the client may not create stays
			// missing and is answered TOPIC_AUTHORIZATION_FAILED below.
			missing = slices.DeleteFunc(missing, func(name string) bool { return !c.allowed(resTopic, name, opDescribe) || !mayAutoCreate(c, name) })
			if len(missing) > 0 {
				s.svc.Cluster.AutoCreateTopics(ctx, missing)
				img = s.svc.Cluster.Image()
			}
		}
	}

	ids := make([]int32, 0, len(img.Brokers))
	for id, b := range img.Brokers {
		if !b.Fenced {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	alive := map[int32]bool{}
	for _, id := range ids {
		b := img.Brokers[id]
		ep, ok := endpointFor(b, info.Listener)
		if !ok {
			continue
		}
		alive[id] = true
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = id, ep.Host, ep.Port
		if b.Rack != "" {
			mb.Rack = kmsg.StringPtr(b.Rack)
		}
		resp.Brokers = append(resp.Brokers, mb)
	}
	resp.ClusterID = kmsg.StringPtr(img.ClusterID)
	resp.ControllerID = s.svc.Cluster.ControllerID()
	if req.Version >= 8 && req.Version <= 10 && req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = allClusterOperations
		if ops, ok := c.authorizedOps(resCluster, authz.ClusterName); ok {
			resp.AuthorizedOperations = ops
		}
	}

	addTopic := func(mt kmsg.MetadataResponseTopic) {
		if req.IncludeTopicAuthorizedOperations {
			mt.AuthorizedOperations = allTopicOperations
			if ops, ok := c.authorizedOps(resTopic, *mt.Topic); ok {
				mt.AuthorizedOperations = ops
			}
		}
		resp.Topics = append(resp.Topics, mt)
	}
	topicError := func(name *string, id [16]byte, code int16) {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.TopicID, mt.ErrorCode = name, id, code
		mt.Partitions = []kmsg.MetadataResponseTopicPartition{}
		resp.Topics = append(resp.Topics, mt)
	}

	if all {
		// All topics: the ones the client may not describe are left
		// out silently (KafkaApis.handleTopicMetadataRequest). Their
		// answer is built once per metadata image and listener.
		cached := s.metadataTopics.all(s, img, info.Listener, alive)
		resp.Topics = make([]kmsg.MetadataResponseTopic, 0, len(cached.topics))
		for i := range cached.topics {
			if c.allowed(resTopic, *cached.topics[i].Topic, opDescribe) {
				addTopic(cached.topics[i])
			}
		}
		return resp, nil
	}
	for _, rt := range req.Topics {
		var (
			t  *raftmeta.Topic
			ok bool
		)
		switch {
		case rt.Topic != nil && *rt.Topic != "":
			if err := raftmeta.ValidateTopicName(*rt.Topic); err != nil {
				topicError(rt.Topic, rt.TopicID, kerr.InvalidTopicException.Code)
				continue
			}
			// Whether the topic exists is told only to a client that
			// may describe it.
			if !c.allowed(resTopic, *rt.Topic, opDescribe) {
				topicError(rt.Topic, [16]byte{}, errTopicAuth)
				continue
			}
			t, ok = img.Topics[*rt.Topic]
			if !ok {
				code := kerr.UnknownTopicOrPartition.Code
				if c.on && (req.AllowAutoTopicCreation || req.Version < 4) && s.autoCreatesTopic(*rt.Topic) && !mayAutoCreate(c, *rt.Topic) {
					code = errTopicAuth
				}
				topicError(rt.Topic, rt.TopicID, code)
				continue
			}
		case rt.TopicID != [16]byte{}:
			t, ok = img.TopicsByID[raftmeta.Uuid(rt.TopicID)]
			if !ok {
				topicError(nil, rt.TopicID, kerr.UnknownTopicID.Code)
				continue
			}
			// Topic ids are not secret: an unauthorized one is named
			// by its id only.
			if !c.allowed(resTopic, t.Name, opDescribe) {
				topicError(nil, rt.TopicID, errTopicAuth)
				continue
			}
		default:
			topicError(rt.Topic, rt.TopicID, kerr.InvalidTopicException.Code)
			continue
		}
		if len(t.Partitions) == 0 {
			topicError(kmsg.StringPtr(t.Name), t.ID, kerr.LeaderNotAvailable.Code)
			continue
		}
		addTopic(s.metadataTopics.one(s, img, info.Listener, alive, t))
	}
	return resp, nil
}

// namesUnknownTopic reports whether req names a topic, by name or by id,
// that img lacks.
func namesUnknownTopic(img *raftmeta.Image, req *kmsg.MetadataRequest) bool {
	for _, rt := range req.Topics {
		switch {
		case rt.Topic != nil && *rt.Topic != "":
			if _, ok := img.Topics[*rt.Topic]; !ok {
				return true
			}
		case rt.TopicID != [16]byte{}:
			if _, ok := img.TopicsByID[raftmeta.Uuid(rt.TopicID)]; !ok {
				return true
			}
		}
	}
	return false
}

// missingTopics lists the named topics of req not in img that Metadata
// auto-creates (TopicPolicy.AutoCreatesTopic).
func (s *Server) missingTopics(img *raftmeta.Image, req *kmsg.MetadataRequest) []string {
	var missing []string
	for _, rt := range req.Topics {
		if rt.Topic == nil || *rt.Topic == "" {
			continue
		}
		if _, ok := img.Topics[*rt.Topic]; ok {
			continue
		}
		if s.autoCreatesTopic(*rt.Topic) {
			missing = append(missing, *rt.Topic)
		}
	}
	return missing
}

// endpointFor picks a broker's endpoint on the named listener; with no
// name (tests) it takes the first.
func endpointFor(b *raftmeta.Broker, listener string) (raftmeta.Endpoint, bool) {
	for _, ep := range b.Endpoints {
		if listener == "" || ep.Listener == listener {
			return ep, true
		}
	}
	return raftmeta.Endpoint{}, false
}

// isInternalTopic and autoCreatesTopic ask the TopicPolicy; without one
// no topic is internal and none is auto-created.
func (s *Server) isInternalTopic(name string) bool {
	return s.svc.Topics != nil && s.svc.Topics.IsInternalTopic(name)
}

func (s *Server) autoCreatesTopic(name string) bool {
	return s.svc.Topics != nil && s.svc.Topics.AutoCreatesTopic(name)
}

// mayAutoCreate reports whether Metadata may create the topic for the
// client: CREATE on the cluster or on the topic.
func mayAutoCreate(c authCheck, name string) bool {
	return c.cluster(opCreate) || c.allowed(resTopic, name, opCreate)
}
