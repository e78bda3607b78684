package raftmeta

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// builder replays one batch of records onto an image, copy-on-write: the
// image it starts from is published and read without locks, so nothing
// reachable from it is ever modified. Each map, topic and partition is
// copied the first time the batch touches it (Kafka builds the next
// MetadataImage from a MetadataDelta the same way). A record that does not
// fit the image is an error, and the caller then drops the whole batch:
// that is deterministic, so every replica drops it too.
type builder struct {
	prev *Image
	next *Image
	// index is the raft index of the batch (the snapshot's offset when
	// restoring one): the epoch of a broker registered with
	// AssignedBrokerEpoch.
	index uint64

	brokersCopied, topicsCopied, configsCopied, aclsCopied bool
	topicCopied                                            map[Uuid]bool
	configCopied                                           map[ConfigResource]bool

	// What the batch touched, resolved against the final image by delta().
	createdTopics     map[Uuid]bool
	changedPartitions map[Uuid]map[int32]bool
	changedConfigs    map[ConfigResource]bool
	changedBrokers    map[int32]bool
	aclsChanged       bool

	// Mirrors (mirror_replay.go): the map is copied on first write; the
	// ids of the mirrors the batch created (nil until one is).
	mirrorsCopied  bool
	createdMirrors map[Uuid]bool

	// SCRAM credentials (scram.go): the outer map and each mechanism's
	// map are copied on first write.
	scramCopied     bool
	scramMechCopied map[int8]bool
	scramChanged    bool

	// Forwarded answers (forwarded.go): the map is copied on first write.
	forwardedCopied bool

	// Client quotas (client_quotas.go): the map is copied on first write,
	// each entity's values on every write.
	quotasCopied, quotasChanged bool
}

func newBuilder(prev *Image, index uint64) *builder {
	next := *prev
	return &builder{
		prev:              prev,
		next:              &next,
		index:             index,
		topicCopied:       map[Uuid]bool{},
		configCopied:      map[ConfigResource]bool{},
		createdTopics:     map[Uuid]bool{},
		changedPartitions: map[Uuid]map[int32]bool{},
		changedConfigs:    map[ConfigResource]bool{},
		changedBrokers:    map[int32]bool{},
	}
}

// replay applies records in order.
func (b *builder) replay(records []Record) error {
	for i, r := range records {
		if err := b.apply(r); err != nil {
			return fmt.Errorf("record %d (%s): %w", i, r.Type(), err)
		}
	}
	return nil
}

func (b *builder) apply(r Record) error {
	switch r := r.(type) {
	case *RegisterBrokerRecord:
		return b.registerBroker(r)
	case *UnregisterBrokerRecord:
		return b.unregisterBroker(r)
	case *FenceBrokerRecord:
		return b.setFenced(r.ID, r.Epoch, true)
	case *UnfenceBrokerRecord:
		return b.setFenced(r.ID, r.Epoch, false)
	case *BrokerRegistrationChangeRecord:
		return b.changeBroker(r)
	case *TopicRecord:
		return b.createTopic(r)
	case *PartitionRecord:
		return b.putPartition(r)
	case *PartitionChangeRecord:
		return b.changePartition(r)
	case *RemoveTopicRecord:
		return b.removeTopic(r)
	case *ConfigRecord:
		if err := b.checkMirrorConfig(r); err != nil {
			return err
		}
		b.setConfig(ConfigResource{Type: r.ResourceType, Name: r.ResourceName}, r.Name, r.Value)
		return nil
	case *ProducerIdsRecord:
		// ProducerIdControlManager.replay: the next id only moves forward,
		// so two blocks can never overlap.
		if r.NextProducerID <= b.next.NextProducerID {
			return fmt.Errorf("next producer id %d is not above the current %d", r.NextProducerID, b.next.NextProducerID)
		}
		b.next.NextProducerID = r.NextProducerID
		return nil
	case *AccessControlEntryRecord:
		return b.addACL(r.ACL)
	case *RemoveAccessControlEntryRecord:
		return b.removeACL(r.ID)
	case *UserScramCredentialRecord:
		return b.putScram(r)
	case *RemoveUserScramCredentialRecord:
		return b.removeScram(r)
	case *ClientQuotaRecord:
		return b.putClientQuota(r)
	case *MirrorRecord:
		return b.createMirror(r)
	case *RemoveMirrorRecord:
		return b.removeMirror(r)
	case *ForwardedRequestRecord:
		return b.putForwarded(r)
	case *FeatureLevelRecord:
		return b.setFeature(r)
	}
	return fmt.Errorf("unhandled record type %s", r.Type())
}

// --- brokers ---

func (b *builder) brokers() map[int32]*Broker {
	if !b.brokersCopied {
		b.next.Brokers = maps.Clone(b.next.Brokers)
		if b.next.Brokers == nil {
			b.next.Brokers = map[int32]*Broker{}
		}
		b.brokersCopied = true
	}
	return b.next.Brokers
}

func (b *builder) registerBroker(r *RegisterBrokerRecord) error {
	if r.BrokerID < 0 {
		return fmt.Errorf("invalid broker id %d", r.BrokerID)
	}
	epoch := r.BrokerEpoch
	switch {
	case epoch == AssignedBrokerEpoch:
		epoch = int64(b.index)
	case epoch < 0:
		return fmt.Errorf("broker %d: invalid epoch %d", r.BrokerID, epoch)
	}
	nb := &Broker{
		ID:            r.BrokerID,
		Epoch:         epoch,
		IncarnationID: r.IncarnationID,
		Endpoints:     slices.Clone(r.EndPoints),
		Rack:          r.Rack,
		Fenced:        r.Fenced,
		LogDirs:       slices.Clone(r.LogDirs),
	}
	// Amending a registration (same incarnation and epoch) keeps the
	// controlled shutdown under way, as Kafka's amended record copies it.
	if cur, ok := b.next.Brokers[r.BrokerID]; ok && cur.Epoch == epoch && cur.IncarnationID == r.IncarnationID {
		nb.InControlledShutdown = cur.InControlledShutdown
	}
	b.brokers()[r.BrokerID] = nb
	b.changedBrokers[r.BrokerID] = true
	return nil
}

func (b *builder) setFenced(id int32, epoch int64, fenced bool) error {
	cur, ok := b.next.Brokers[id]
	if !ok {
		return fmt.Errorf("broker %d is not registered", id)
	}
	// ClusterControlManager.replay rejects a fence/unfence for another
	// incarnation of the broker.
	if cur.Epoch != epoch {
		return fmt.Errorf("broker %d has epoch %d, not %d", id, cur.Epoch, epoch)
	}
	nb := *cur
	nb.Fenced = fenced
	b.brokers()[id] = &nb
	b.changedBrokers[id] = true
	return nil
}

func (b *builder) changeBroker(r *BrokerRegistrationChangeRecord) error {
	cur, err := b.brokerAt(r.BrokerID, r.BrokerEpoch)
	if err != nil {
		return err
	}
	nb := *cur
	switch r.Fenced {
	case FenceChangeNone:
	case FenceChangeFence:
		nb.Fenced = true
	case FenceChangeUnfence:
		nb.Fenced = false
	default:
		return fmt.Errorf("broker %d: invalid fencing change %d", r.BrokerID, r.Fenced)
	}
	switch r.InControlledShutdown {
	case 0:
	case 1:
		nb.InControlledShutdown = true
	default:
		return fmt.Errorf("broker %d: invalid controlled shutdown change %d", r.BrokerID, r.InControlledShutdown)
	}
	b.brokers()[r.BrokerID] = &nb
	b.changedBrokers[r.BrokerID] = true
	return nil
}

// --- topics and partitions ---

func (b *builder) topicMaps() (map[string]*Topic, map[Uuid]*Topic) {
	if !b.topicsCopied {
		b.next.Topics = maps.Clone(b.next.Topics)
		b.next.TopicsByID = maps.Clone(b.next.TopicsByID)
		if b.next.Topics == nil {
			b.next.Topics = map[string]*Topic{}
		}
		if b.next.TopicsByID == nil {
			b.next.TopicsByID = map[Uuid]*Topic{}
		}
		b.topicsCopied = true
	}
	return b.next.Topics, b.next.TopicsByID
}

// topicForWrite returns the topic with this id, copied for this batch.
func (b *builder) topicForWrite(id Uuid) (*Topic, error) {
	t, ok := b.next.TopicsByID[id]
	if !ok {
		return nil, fmt.Errorf("unknown topic id %s", id)
	}
	if b.topicCopied[id] {
		return t, nil
	}
	nt := &Topic{Name: t.Name, ID: t.ID, Partitions: slices.Clone(t.Partitions)}
	byName, byID := b.topicMaps()
	byName[nt.Name] = nt
	byID[id] = nt
	b.topicCopied[id] = true
	return nt, nil
}

func (b *builder) createTopic(r *TopicRecord) error {
	if r.Name == "" {
		return fmt.Errorf("empty topic name")
	}
	if r.TopicID.IsZero() {
		return fmt.Errorf("topic %q has the zero topic id", r.Name)
	}
	if _, ok := b.next.Topics[r.Name]; ok {
		return fmt.Errorf("topic %q already exists", r.Name)
	}
	if t, ok := b.next.TopicsByID[r.TopicID]; ok {
		return fmt.Errorf("topic id %s already belongs to %q", r.TopicID, t.Name)
	}
	byName, byID := b.topicMaps()
	t := &Topic{Name: r.Name, ID: r.TopicID}
	byName[r.Name] = t
	byID[r.TopicID] = t
	b.topicCopied[r.TopicID] = true
	b.createdTopics[r.TopicID] = true
	return nil
}

func validReplicas(replicas, isr []int32, leader int32) error {
	if len(replicas) == 0 {
		return fmt.Errorf("empty replica list")
	}
	seen := make(map[int32]bool, len(replicas))
	for _, r := range replicas {
		if r < 0 || seen[r] {
			return fmt.Errorf("replicas %v: invalid or repeated broker %d", replicas, r)
		}
		seen[r] = true
	}
	for _, r := range isr {
		if !seen[r] {
			return fmt.Errorf("isr member %d is not a replica in %v", r, replicas)
		}
	}
	if leader != NoLeader && !seen[leader] {
		return fmt.Errorf("leader %d is not a replica in %v", leader, replicas)
	}
	return nil
}

func (b *builder) putPartition(r *PartitionRecord) error {
	t, err := b.topicForWrite(r.TopicID)
	if err != nil {
		return err
	}
	if r.PartitionID < 0 || int(r.PartitionID) > len(t.Partitions) {
		return fmt.Errorf("partition %d of %q: the topic has %d partitions", r.PartitionID, t.Name, len(t.Partitions))
	}
	if err := validReplicas(r.Replicas, r.ISR, r.Leader); err != nil {
		return fmt.Errorf("partition %s-%d: %w", t.Name, r.PartitionID, err)
	}
	p := &Partition{
		Topic:            t.Name,
		TopicID:          t.ID,
		Index:            r.PartitionID,
		Replicas:         slices.Clone(r.Replicas),
		ISR:              slices.Clone(r.ISR),
		Leader:           r.Leader,
		LeaderEpoch:      r.LeaderEpoch,
		PartitionEpoch:   r.PartitionEpoch,
		AddingReplicas:   replicasOrNil(r.AddingReplicas),
		RemovingReplicas: replicasOrNil(r.RemovingReplicas),
	}
	if err := validReassigning(p); err != nil {
		return fmt.Errorf("partition %s-%d: %w", t.Name, r.PartitionID, err)
	}
	if p.ISR == nil {
		p.ISR = []int32{}
	}
	if int(r.PartitionID) == len(t.Partitions) {
		t.Partitions = append(t.Partitions, p)
	} else {
		t.Partitions[r.PartitionID] = p
	}
	b.touchPartition(t.ID, r.PartitionID)
	return nil
}

func (b *builder) changePartition(r *PartitionChangeRecord) error {
	t, err := b.topicForWrite(r.TopicID)
	if err != nil {
		return err
	}
	if r.PartitionID < 0 || int(r.PartitionID) >= len(t.Partitions) {
		return fmt.Errorf("partition %d of %q: the topic has %d partitions", r.PartitionID, t.Name, len(t.Partitions))
	}
	np := t.Partitions[r.PartitionID].apply(r)
	if err := validReplicas(np.Replicas, np.ISR, np.Leader); err != nil {
		return fmt.Errorf("partition %s-%d: %w", t.Name, r.PartitionID, err)
	}
	if err := validReassigning(np); err != nil {
		return fmt.Errorf("partition %s-%d: %w", t.Name, r.PartitionID, err)
	}
	t.Partitions[r.PartitionID] = np
	b.touchPartition(t.ID, r.PartitionID)
	return nil
}

func (b *builder) touchPartition(id Uuid, p int32) {
	m := b.changedPartitions[id]
	if m == nil {
		m = map[int32]bool{}
		b.changedPartitions[id] = m
	}
	m[p] = true
}

func (b *builder) removeTopic(r *RemoveTopicRecord) error {
	t, ok := b.next.TopicsByID[r.TopicID]
	if !ok {
		return fmt.Errorf("unknown topic id %s", r.TopicID)
	}
	byName, byID := b.topicMaps()
	delete(byName, t.Name)
	delete(byID, r.TopicID)
	delete(b.topicCopied, r.TopicID)
	// ReplicationControlManager.replay(RemoveTopicRecord) drops the
	// topic's configs with it: a topic created again later under the same
	// name starts from the defaults.
	res := ConfigResource{Type: ConfigResourceTopic, Name: t.Name}
	if _, ok := b.next.Configs[res]; ok {
		b.configs()
		delete(b.next.Configs, res)
		b.changedConfigs[res] = true
	}
	return nil
}

// --- configs ---

func (b *builder) configs() map[ConfigResource]map[string]string {
	if !b.configsCopied {
		b.next.Configs = maps.Clone(b.next.Configs)
		if b.next.Configs == nil {
			b.next.Configs = map[ConfigResource]map[string]string{}
		}
		b.configsCopied = true
	}
	return b.next.Configs
}

func (b *builder) setConfig(res ConfigResource, key string, value *string) {
	all := b.configs()
	m := all[res]
	// A resource emptied earlier in this batch was dropped from all: it
	// needs a new map even though it was already copied.
	if !b.configCopied[res] || m == nil {
		m = maps.Clone(m)
		if m == nil {
			m = map[string]string{}
		}
		b.configCopied[res] = true
	}
	if value == nil {
		delete(m, key)
	} else {
		m[key] = *value
	}
	// ConfigurationControlManager.replay drops a resource left without
	// keys, so an image never holds empty config maps.
	if len(m) == 0 {
		delete(all, res)
	} else {
		all[res] = m
	}
	b.changedConfigs[res] = true
}

// --- ACLs ---

func (b *builder) acls() []ACLBinding {
	if !b.aclsCopied {
		b.next.ACLs = slices.Clone(b.next.ACLs)
		b.aclsCopied = true
	}
	return b.next.ACLs
}

func (b *builder) addACL(a ACLBinding) error {
	if a.ID.IsZero() {
		return fmt.Errorf("acl with the zero id")
	}
	for i := range b.next.ACLs {
		if b.next.ACLs[i].ID == a.ID {
			return fmt.Errorf("acl id %s already exists", a.ID)
		}
	}
	b.next.ACLs = append(b.acls(), a)
	b.aclsChanged = true
	return nil
}

func (b *builder) removeACL(id Uuid) error {
	acls := b.acls()
	for i := range acls {
		if acls[i].ID == id {
			b.next.ACLs = slices.Delete(acls, i, i+1)
			b.aclsChanged = true
			return nil
		}
	}
	return fmt.Errorf("no acl with id %s", id)
}

// delta resolves what the batch touched against the final image: topics
// created and deleted within the batch appear in neither list, partitions
// appear once with their final state, and every list is sorted so that
// subscribers see the same order on every replica.
func (b *builder) delta() *Delta {
	d := &Delta{ACLsChanged: b.aclsChanged, ScramChanged: b.scramChanged, ClientQuotasChanged: b.quotasChanged}
	for id := range b.createdTopics {
		if t, ok := b.next.TopicsByID[id]; ok {
			d.CreatedTopics = append(d.CreatedTopics, t)
		}
	}
	for id, t := range b.prev.TopicsByID {
		if _, ok := b.next.TopicsByID[id]; !ok {
			d.DeletedTopics = append(d.DeletedTopics, t)
		}
	}
	for id, parts := range b.changedPartitions {
		t, ok := b.next.TopicsByID[id]
		if !ok {
			continue
		}
		for p := range parts {
			d.ChangedPartitions = append(d.ChangedPartitions, t.Partitions[p])
		}
	}
	for res := range b.changedConfigs {
		d.ChangedConfigs = append(d.ChangedConfigs, res)
	}
	for id := range b.changedBrokers {
		d.ChangedBrokers = append(d.ChangedBrokers, id)
	}
	b.mirrorDelta(d)
	byName := func(a, b *Topic) int { return cmp.Compare(a.Name, b.Name) }
	slices.SortFunc(d.CreatedTopics, byName)
	slices.SortFunc(d.DeletedTopics, byName)
	slices.SortFunc(d.ChangedPartitions, func(a, b *Partition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Index, b.Index))
	})
	slices.SortFunc(d.ChangedConfigs, compareResources)
	slices.Sort(d.ChangedBrokers)
	return d
}
