package raftmeta

// Delta is what one applied batch of records changed (Kafka's
// MetadataDelta, already applied). Subscribers (the replica manager, the
// coordinators) react to it with the image it produced.
type Delta struct {
	// CreatedTopics are topics new in this image.
	CreatedTopics []*Topic
	// DeletedTopics are topics gone from this image, as they were.
	DeletedTopics []*Topic
	// ChangedPartitions are partitions created or whose replicas, ISR,
	// leader or epochs changed (including those of created topics).
	ChangedPartitions []*Partition
	// ChangedConfigs are resources whose dynamic configs changed.
	ChangedConfigs []ConfigResource
	// ChangedBrokers are brokers registered, fenced or unfenced.
	ChangedBrokers []int32
	// ACLsChanged is set when any ACL was created or removed.
	ACLsChanged bool
	// ScramChanged is set when any SCRAM credential was set or removed.
	ScramChanged bool
	// ClientQuotasChanged is set when any client quota was set or removed.
	ClientQuotasChanged bool
	// CreatedMirrors are cluster mirrors new in this image, DeletedMirrors
	// those gone from it (as they were), each sorted by name. A mirror's
	// config changes are in ChangedConfigs (ConfigResourceMirror), a
	// topic's mirror.name changes under its topic resource.
	CreatedMirrors []*Mirror
	DeletedMirrors []*Mirror
}

// Empty reports whether the delta changes nothing.
func (d *Delta) Empty() bool {
	return len(d.CreatedTopics) == 0 && len(d.DeletedTopics) == 0 && len(d.ChangedPartitions) == 0 &&
		len(d.ChangedConfigs) == 0 && len(d.ChangedBrokers) == 0 && !d.ACLsChanged && !d.ScramChanged && !d.ClientQuotasChanged &&
		len(d.CreatedMirrors) == 0 && len(d.DeletedMirrors) == 0
}
