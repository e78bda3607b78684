package raftmeta

// The internal topics' names, in one place for every layer: the
// coordinators own the topics, replication refuses clients' writes to
// them, wire flags them in Metadata, and the controller refuses to mirror
// them. raftmeta is the lowest package all of them import.
const (
	// ConsumerOffsetsTopic holds committed offsets and group metadata
	// (Kafka's Topic.GROUP_METADATA_TOPIC_NAME).
	ConsumerOffsetsTopic = "__consumer_offsets"
	// TransactionStateTopic holds the transaction log (Kafka's
	// Topic.TRANSACTION_STATE_TOPIC_NAME).
	TransactionStateTopic = "__transaction_state"
	// ShareGroupStateTopic holds the share-group state of KIP-932 (Kafka's
	// Topic.SHARE_GROUP_STATE_TOPIC_NAME).
	ShareGroupStateTopic = "__share_group_state"
)

// IsInternalTopic reports Kafka's internal topics (Topic.isInternal): the
// coordinators' state topics. Clients may not produce to them or delete
// their records, and Metadata marks them internal. __mirror_state
// (MirrorStateTopic) and __cluster_metadata (ClusterMetadataTopic) are not
// in it, as they are not in Kafka's Topic.INTERNAL_TOPICS; IsUnmirrorable
// adds them.
func IsInternalTopic(name string) bool {
	switch name {
	case ConsumerOffsetsTopic, TransactionStateTopic, ShareGroupStateTopic:
		return true
	}
	return false
}

// IsUnmirrorable reports the topics a mirror may not take: the internal
// topics, the metadata log and __mirror_state, which belong to the
// destination cluster itself (a mirror topic is read-only).
func IsUnmirrorable(name string) bool {
	return IsInternalTopic(name) || name == ClusterMetadataTopic || name == MirrorStateTopic
}
