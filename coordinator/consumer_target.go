package coordinator

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"sort"

	"github.com/strait-io/strait/coordinator/assignor"
	"github.com/strait-io/strait/raftmeta"
)

// updateTargetAssignment computes the group's target assignment for
// groupEpoch with the preferred server-side assignor, the group's members
// but those in exclude, plus updated, and returns updated's target; the
// changed targets and the new assignment epoch are added to recs
// (GroupMetadataManager.updateTargetAssignment, TargetAssignmentBuilder).
func (s *shard) updateTargetAssignment(g *consumerGroup, groupEpoch int32, exclude []string, updated *consumerMember,
	regexes map[string]resolvedRegex, img *raftmeta.Image, recs *[]cgRecord) (assignment, *cgError) {
	members := g.membersWith(exclude, updated)
	name := g.preferredServerAssignor(g.member(updated.id), updated)
	if name == "" {
		name = s.c.cfg.ConsumerAssignors[0]
	}
	a, _ := consumerAssignor(name)
	spec := assignor.GroupSpec{Members: make(map[string]assignor.Member, len(members))}
	topicsOf := func(m *consumerMember) []topicID {
		ids := subscribedTopicIDs(m, regexes, img)
		topics := make([]topicID, 0, len(ids))
		for t := range ids {
			topics = append(topics, t)
		}
		slices.SortFunc(topics, compareTopicIDs)
		return topics
	}
	spec.Type = assignor.Homogeneous
	var first []topicID
	for id, m := range members {
		topics := topicsOf(m)
		if first == nil {
			first = topics
		} else if !slices.Equal(first, topics) {
			// ModernGroup.subscriptionType: homogeneous when every
			// member subscribes to the same topics.
			spec.Type = assignor.Heterogeneous
		}
		spec.Members[id] = assignor.Member{
			InstanceID: m.instanceID,
			RackID:     m.rackID,
			Topics:     topics,
			Assignment: assignor.Partitions(g.targetOf(id, m.instanceID)),
		}
	}
	result, err := a.Assign(spec, imageDescriber{img})
	if err != nil {
		s.log.Error("computing a consumer group's target assignment failed", "group", g.id, "epoch", groupEpoch, "err", err)
		return nil, cgErrorf(unknownServerError, "Failed to compute a new target assignment for epoch %d: %v", groupEpoch, err)
	}
	ids := make([]string, 0, len(members))
	for id := range members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		next := normalizeAssignment(assignment(result[id]))
		if old, ok := g.target[id]; !ok || !equalAssignments(old, next) {
			*recs = append(*recs, newTargetAssignmentRecord(g.id, id, next))
		}
	}
	*recs = append(*recs, newTargetAssignmentEpochRecord(g.id, groupEpoch))
	s.log.Info("computed a new target assignment", "group", g.id, "epoch", groupEpoch, "assignor", name, "members", len(members))
	return normalizeAssignment(assignment(result[updated.id])), nil
}

func compareTopicIDs(x, y topicID) int { return bytes.Compare(x[:], y[:]) }

// membersWith is the group's members but those in exclude, plus extra.
func (g *consumerGroup) membersWith(exclude []string, extra *consumerMember) map[string]*consumerMember {
	out := make(map[string]*consumerMember, len(g.members)+1)
	for id, m := range g.members {
		if !slices.Contains(exclude, id) {
			out[id] = m
		}
	}
	if extra != nil {
		out[extra.id] = extra
	}
	return out
}

// subscribedTopicNamesWith is subscribedTopicNames over membersWith, with
// the regexes resolved as given.
func (g *consumerGroup) subscribedTopicNamesWith(exclude []string, extra *consumerMember, regexes map[string]resolvedRegex) map[string]bool {
	out := map[string]bool{}
	for _, m := range g.membersWith(exclude, extra) {
		for _, t := range m.subscribedTopicNames {
			out[t] = true
		}
		if m.subscribedTopicRegex != "" {
			for _, t := range regexes[m.subscribedTopicRegex].topics {
				out[t] = true
			}
		}
	}
	return out
}

// metadataExpired reports whether the subscribed topics' metadata must be
// checked again: the image or the group epoch changed since the last check.
func (g *consumerGroup) metadataExpired(img *raftmeta.Image) bool {
	return !g.metadataRefreshed || g.metadataRefreshImage != img.Offset || g.metadataRefreshEpoch != g.groupEpoch
}

func (g *consumerGroup) noteMetadataRefresh(img *raftmeta.Image, epoch int32) {
	g.metadataRefreshed, g.metadataRefreshImage, g.metadataRefreshEpoch = true, img.Offset, epoch
}

// metadataHash summarizes what the assignment depends on in the
// subscribed topics: their ids, partition counts and replica racks. A
// different hash bumps the group epoch (KIP-1101's metadata hash; Kafka
// computes its value with XXH3 over the same facts, this is FNV-1a: the
// value differs, its use is the same).
func metadataHash(img *raftmeta.Image, topics map[string]bool) int64 {
	names := make([]string, 0, len(topics))
	for t := range topics {
		if img.Topics[t] != nil {
			names = append(names, t)
		}
	}
	if len(names) == 0 {
		return 0
	}
	sort.Strings(names)
	h := fnv.New64a()
	var buf [4]byte
	for _, name := range names {
		t := img.Topics[name]
		h.Write([]byte(name))
		h.Write(t.ID[:])
		binary.BigEndian.PutUint32(buf[:], uint32(len(t.Partitions)))
		h.Write(buf[:])
		for _, p := range t.Partitions {
			for _, rack := range racksOf(img, p) {
				h.Write([]byte(rack))
				h.Write([]byte{0})
			}
			h.Write([]byte{1})
		}
	}
	return int64(h.Sum64())
}

// racksOf returns the sorted racks of a partition's replicas.
func racksOf(img *raftmeta.Image, p *raftmeta.Partition) []string {
	var racks []string
	for _, r := range p.Replicas {
		if b := img.Brokers[r]; b != nil && b.Rack != "" {
			racks = append(racks, b.Rack)
		}
	}
	slices.Sort(racks)
	return slices.Compact(racks)
}

// imageDescriber describes topics to the assignors from the metadata image.
type imageDescriber struct{ img *raftmeta.Image }

func (d imageDescriber) NumPartitions(t topicID) int {
	if topic := d.img.TopicsByID[raftmeta.Uuid(t)]; topic != nil {
		return len(topic.Partitions)
	}
	return -1
}

func (d imageDescriber) RacksOf(t topicID, partition int32) []string {
	topic := d.img.TopicsByID[raftmeta.Uuid(t)]
	if topic == nil || partition < 0 || int(partition) >= len(topic.Partitions) {
		return nil
	}
	return racksOf(d.img, topic.Partitions[partition])
}
