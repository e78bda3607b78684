package raftmeta

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// createClone creates a drill clone of a mirror topic (`strait mirror
// clone`, issue 27): CreateTopics with mirror.clone.of = v comes here from
// replicationControl.createTopic. The clone is checked and shaped here (the
// mirror domain knows which topics are whose) and created by
// replicationControl like any topic, as StartMirrorTopics creates a mirror
// topic.
func (c *mirrorControl) createClone(img *Image, rt *kmsg.CreateTopicsRequestTopic, v string, created map[string]string) ([]Record, *apiError) {
	clone, src, e := cloneTopic(img, rt, v)
	if e != nil {
		return nil, e
	}
	recs, e := c.replication.createTopicWithID(img, clone, created, Uuid{})
	if e == nil {
		leadLikeSource(recs, src)
	}
	return recs, e
}

// cloneTopic checks a CreateTopics topic asking to be a clone (v its
// mirror.clone.of) and returns the CreateTopics topic to create: the
// source's partition count and replicas, its configs under the request's,
// and mirror.clone.of with the source's topic id. The clone's partitions
// take the source partitions' leaders, with a leader epoch above theirs
// (the copied batches carry epochs up to the source's; the clone's own
// must come after them): leadLikeSource sets them.
func cloneTopic(img *Image, rt *kmsg.CreateTopicsRequestTopic, v string) (*kmsg.CreateTopicsRequestTopic, *Topic, *apiError) {
	spec, err := ParseCloneSpec(v)
	if err != nil {
		return nil, nil, errorf(kerr.InvalidConfig, "%s", err.Error())
	}
	src, ok := img.Topics[spec.Topic]
	if !ok {
		return nil, nil, errorf(kerr.UnknownTopicOrPartition, "The topic '%s' to clone does not exist.", spec.Topic)
	}
	if !spec.TopicID.IsZero() && spec.TopicID != src.ID {
		return nil, nil, errorf(kerr.InconsistentTopicID, "The topic '%s' has id %s, not %s.", spec.Topic, src.ID, spec.TopicID)
	}
	if m, _ := img.TopicMirror(spec.Topic); m != spec.Mirror {
		return nil, nil, errorf(kerr.InvalidRequest, "The topic '%s' is not a topic of mirror '%s'.", spec.Topic, spec.Mirror)
	}
	if len(spec.UpTo) != len(src.Partitions) {
		return nil, nil, errorf(kerr.InvalidPartitions, "The topic '%s' has %d partitions; the clone point names %d.", spec.Topic, len(src.Partitions), len(spec.UpTo))
	}
	if len(rt.ReplicaAssignment) > 0 || (rt.NumPartitions != -1 && int(rt.NumPartitions) != len(src.Partitions)) || rt.ReplicationFactor != -1 {
		return nil, nil, errorf(kerr.InvalidRequest, "A clone takes the partitions and replicas of '%s': NumPartitions and ReplicationFactor must be -1, with no assignment.", spec.Topic)
	}
	spec.TopicID = src.ID
	out := *rt
	out.NumPartitions, out.ReplicationFactor = -1, -1
	configs := maps.Clone(img.TopicConfig(spec.Topic))
	delete(configs, MirrorNameConfig)
	for _, c := range rt.Configs {
		if c.Value != nil {
			configs[c.Name] = *c.Value
		}
	}
	configs[MirrorCloneConfig] = spec.String()
	out.Configs = nil
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, strp(configs[k])
		out.Configs = append(out.Configs, c)
	}
	out.ReplicaAssignment = nil
	for _, p := range src.Partitions {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = p.Index, slices.Clone(p.Replicas)
		out.ReplicaAssignment = append(out.ReplicaAssignment, ra)
	}
	out.NumPartitions = -1
	return &out, src, nil
}

// leadLikeSource gives each PartitionRecord of a clone its source
// partition's leader (when in the clone's ISR), whose log holds the whole
// clone point, and a leader epoch above the source's.
func leadLikeSource(records []Record, src *Topic) {
	for _, r := range records {
		pr, ok := r.(*PartitionRecord)
		if !ok || int(pr.PartitionID) >= len(src.Partitions) {
			continue
		}
		sp := src.Partitions[pr.PartitionID]
		if slices.Contains(pr.ISR, sp.Leader) {
			pr.Leader = sp.Leader
		}
		pr.LeaderEpoch = sp.LeaderEpoch + 1
	}
}
