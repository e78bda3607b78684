package wire

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// DescribeTopicPartitions: v0 (KIP-966; the Java admin client's
// describeTopics since 3.8)
//
// Behavior, as Kafka's DescribeTopicPartitionsRequestHandler and
// KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse:
// * An empty topic list describes every topic; topics are answered in
//   name order, from the Cursor's topic (and, in that topic, from the
//   Cursor's partition) on.
// * At most min(ResponsePartitionLimit, max.request.partition.size.limit)
//   partitions (at least 1) are answered; NextCursor names the first
//   partition left out, or the next topic when the limit ended exactly at a
//   topic's end. A topic none of whose partitions fit is left out.
// * A named topic the client may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED
//   (zero id, no partitions, after the others), whether it exists or not;
//   when listing all, it is left out silently. A named unknown topic is
//   UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an invalid
//   name). Listing all, a cursor on a deleted topic resumes at the next
//   name.
// * A cursor with a negative partition, or naming a topic the list lacks,
//   is INVALID_REQUEST on every named topic (Kafka's getErrorResponse).
// * Eligible leader replicas and the last known ELR are empty: Strait has
//   no ELR (KIP-966's eligible.leader.replicas.version is 0). A replica on
//   a fenced broker, or one without the request's listener, is offline;
//   a leader that is offline is answered as -1.
// * Topic authorized operations are always set (all operations with
//   enforcement off).

func init() {
	register(api{key: 75, min: 0, max: 0, handle: (*Server).handleDescribeTopicPartitions})
}

// defaultMaxRequestPartitionSizeLimit is Kafka's default of
// max.request.partition.size.limit.
const defaultMaxRequestPartitionSizeLimit = 2000

func (s *Server) handleDescribeTopicPartitions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeTopicPartitionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	if msg := invalidTopicPartitionsCursor(req); msg != "" {
		for _, rt := range req.Topics {
			t := kmsg.NewDescribeTopicPartitionsResponseTopic()
			t.Topic, t.ErrorCode = kmsg.StringPtr(rt.Topic), kerr.InvalidRequest.Code
			t.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
			resp.Topics = append(resp.Topics, t)
		}
		s.logger.Debug("DescribeTopicPartitions refused", "reason", msg)
		return resp, nil
	}
	c := s.auth(ctx)
	all := len(req.Topics) == 0
	img := s.svc.Cluster.Image()
	if !all && slices.ContainsFunc(req.Topics, func(rt kmsg.DescribeTopicPartitionsRequestTopic) bool { return img.Topics[rt.Topic] == nil }) &&
		s.svc.Cluster.CatchUpMetadata(ctx) {
		// As Metadata: a topic created a moment ago may be in metadata
		// received but not yet applied.
		img = s.svc.Cluster.Image()
	}

	var cursorTopic string
	var cursorPartition int32
	if req.Cursor != nil {
		cursorTopic, cursorPartition = req.Cursor.Topic, req.Cursor.Partition
	}
	var names []string
	if all {
		names = img.TopicNames()
	} else {
		for _, rt := range req.Topics {
			names = append(names, rt.Topic)
		}
		slices.Sort(names)
		names = slices.Compact(names)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n < cursorTopic })

	var denied []string
	names = slices.DeleteFunc(names, func(n string) bool {
		if c.allowed(resTopic, n, opDescribe) {
			return false
		}
		if !all {
			denied = append(denied, n)
		}
		return true
	})

	remaining := max(min(s.cfg.MaxRequestPartitionSizeLimit, req.ResponsePartitionLimit), 1)
	alive := aliveOnListener(img, reqctx.From(ctx).Listener)
	for _, name := range names {
		if remaining == 0 {
			// The limit ended at the previous topic's end: the next
			// page starts at this one, whether it exists or not.
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name}
			break
		}
		t := img.Topics[name]
		if t == nil {
			if all {
				continue
			}
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), kerr.UnknownTopicOrPartition.Code
			if raftmeta.ValidateTopicName(name) != nil {
				rt.ErrorCode = kerr.InvalidTopicException.Code
			}
			rt.IsInternal = s.isInternalTopic(name)
			rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		start := int32(0)
		if name == cursorTopic {
			start = cursorPartition
		}
		n := int32(len(t.Partitions))
		start = min(start, n) // a cursor past the topic's end answers none of it
		end := start + min(remaining, n-start)
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		rt.Topic, rt.TopicID, rt.IsInternal = kmsg.StringPtr(name), t.ID, s.isInternalTopic(name)
		rt.AuthorizedOperations = allTopicOperations
		if ops, ok := c.authorizedOps(resTopic, name); ok {
			rt.AuthorizedOperations = ops
		}
		rt.Partitions = make([]kmsg.DescribeTopicPartitionsResponseTopicPartition, 0, end-start)
		for _, p := range t.Partitions[start:end] {
			rt.Partitions = append(rt.Partitions, describedPartition(p, alive))
		}
		resp.Topics = append(resp.Topics, rt)
		if end < n {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: end}
			break
		}
		remaining -= end - start
	}
	for _, name := range denied {
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), errTopicAuth
		rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// invalidTopicPartitionsCursor says what is wrong with the request's
// cursor, or "": Kafka throws InvalidRequestException for a negative
// partition, and for a topic list that lacks the cursor's topic.
func invalidTopicPartitionsCursor(req *kmsg.DescribeTopicPartitionsRequest) string {
	if req.Cursor == nil {
		return ""
	}
	if req.Cursor.Partition < 0 {
		return fmt.Sprintf("cursor partition must be valid: %d", req.Cursor.Partition)
	}
	if len(req.Topics) > 0 && !slices.ContainsFunc(req.Topics, func(rt kmsg.DescribeTopicPartitionsRequestTopic) bool { return rt.Topic == req.Cursor.Topic }) {
		return "topic list should contain the cursor topic: " + req.Cursor.Topic
	}
	return ""
}

// aliveOnListener is the set of unfenced brokers with an endpoint on the
// listener (all of them with no listener name, in tests).
func aliveOnListener(img *raftmeta.Image, listener string) map[int32]bool {
	alive := make(map[int32]bool, len(img.Brokers))
	for id, b := range img.Brokers {
		if _, ok := endpointFor(b, listener); ok && !b.Fenced {
			alive[id] = true
		}
	}
	return alive
}

// describedPartition is one partition of a DescribeTopicPartitions answer.
func describedPartition(p *raftmeta.Partition, alive map[int32]bool) kmsg.DescribeTopicPartitionsResponseTopicPartition {
	rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
	rp.Partition, rp.LeaderID, rp.LeaderEpoch = p.Index, p.Leader, p.LeaderEpoch
	if !alive[p.Leader] {
		rp.LeaderID = -1
	}
	rp.Replicas = slices.Clone(p.Replicas)
	rp.ISR = slices.Clone(p.ISR)
	rp.EligibleLeaderReplicas = []int32{}
	rp.LastKnownELR = []int32{}
	rp.OfflineReplicas = []int32{}
	for _, r := range p.Replicas {
		if !alive[r] {
			rp.OfflineReplicas = append(rp.OfflineReplicas, r)
		}
	}
	return rp
}
