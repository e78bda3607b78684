package assignor

// StaticTopics is a TopicDescriber backed by a map, for tests and for
// callers that already hold the metadata they need.
type StaticTopics map[TopicID]StaticTopic

// StaticTopic describes one topic of a StaticTopics.
type StaticTopic struct {
	Partitions int
	// Racks holds the racks of each partition's replicas, by partition;
	// nil (or shorter than Partitions) where they are unknown.
	Racks [][]string
}

// NumPartitions implements TopicDescriber.
func (s StaticTopics) NumPartitions(t TopicID) int {
	topic, ok := s[t]
	if !ok {
		return -1
	}
	return topic.Partitions
}

// RacksOf implements TopicDescriber.
func (s StaticTopics) RacksOf(t TopicID, partition int32) []string {
	topic, ok := s[t]
	if !ok || partition < 0 || int(partition) >= len(topic.Racks) {
		return nil
	}
	return topic.Racks[partition]
}
