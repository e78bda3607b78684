// Package raftmeta is Strait's metadata quorum: the cluster metadata log
// replicated with hashicorp/raft, applied by a deterministic FSM to an
// immutable Image, and the controller that validates admin requests and
// appends records (KRaft's role in Apache Kafka).
package raftmeta

import (
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
)

// Uuid is a Kafka UUID (topic ids).
type Uuid [16]byte

// String is Kafka's Uuid.toString: URL-safe base64 without padding.
func (u Uuid) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// IsZero reports whether u is Kafka's ZERO_UUID.
func (u Uuid) IsZero() bool { return u == Uuid{} }

// ParseUuid parses Kafka's 22-character base64 form.
func ParseUuid(s string) (Uuid, error) {
	var u Uuid
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, fmt.Errorf("invalid uuid %q", s)
	}
	copy(u[:], b)
	return u, nil
}

// Image is the cluster metadata at one point of the log (Kafka's
// MetadataImage). It is immutable: the FSM builds a new Image for every
// applied batch and publishes it atomically, so readers never lock.
type Image struct {
	// Offset is the raft index of the last record applied.
	Offset uint64
	// ClusterID is the cluster's id, fixed when the log is formatted.
	ClusterID string
	// Brokers are the registered brokers by node id.
	Brokers map[int32]*Broker
	// Topics by name and by id.
	Topics     map[string]*Topic
	TopicsByID map[Uuid]*Topic
	// Configs holds the dynamic (non-default) configs per resource.
	Configs map[ConfigResource]map[string]string
	// ACLs are the stored access control bindings.
	ACLs []ACLBinding
	// Scram holds the SCRAM credentials by mechanism type code and user
	// (Kafka's ScramImage; scram.go).
	Scram map[int8]map[string]ScramCredential
	// ClientQuotas holds the client quotas by entity and key (Kafka's
	// ClientQuotasImage; client_quotas.go); nil until one is set.
	ClientQuotas map[QuotaEntity]map[string]float64
	// NextProducerID is the first producer id not yet handed out.
	NextProducerID int64
	// Mirrors are the KIP-1279 cluster mirrors by name (mirror_image.go);
	// their configs are in Configs under ConfigResourceMirror.
	Mirrors map[string]*Mirror
	// Forwarded holds the answers to the latest forwarded requests per
	// forwarding broker, oldest first (forwarded.go); nil until one is.
	Forwarded map[int32][]*ForwardedAnswer
	// Features holds the feature levels FeatureLevelRecords set, by name
	// (features.go; FeatureLevel adds the bootstrap levels); nil until one
	// is set.
	Features map[string]int16
}

// EmptyImage is the image before any record is applied.
func EmptyImage() *Image {
	return &Image{
		Brokers:    map[int32]*Broker{},
		Topics:     map[string]*Topic{},
		TopicsByID: map[Uuid]*Topic{},
		Configs:    map[ConfigResource]map[string]string{},
		Mirrors:    map[string]*Mirror{},
	}
}

// Broker is a registered broker (RegisterBrokerRecord).
type Broker struct {
	ID        int32
	Epoch     int64
	Endpoints []Endpoint
	Rack      string
	Fenced    bool
	// InControlledShutdown is set while the broker moves its leadership
	// away before stopping (heartbeat WantShutdown); it is then no
	// candidate for leadership or ISR membership.
	InControlledShutdown bool
	// IncarnationID identifies the broker process that registered; a
	// restarted broker registers again with a new one.
	IncarnationID Uuid
	// LogDirs are the ids of its log directories (RegisterBrokerRecord).
	LogDirs []Uuid
}

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	Listener         string // e.g. PLAINTEXT
	SecurityProtocol string // PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
	Host             string
	Port             int32
}

// Topic is a topic and its partitions (TopicRecord + PartitionRecords).
type Topic struct {
	Name       string
	ID         Uuid
	Partitions []*Partition // index i is partition i
}

// Partition is one partition's replica assignment and leadership
// (PartitionRecord / PartitionChangeRecord).
type Partition struct {
	Topic          string
	TopicID        Uuid
	Index          int32
	Replicas       []int32
	ISR            []int32
	Leader         int32 // -1 when offline
	LeaderEpoch    int32
	PartitionEpoch int32
	// AddingReplicas and RemovingReplicas are those of an ongoing
	// reassignment (KIP-455; partition_reassign.go), both members of
	// Replicas; both empty when none is under way.
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// ConfigResourceType mirrors Kafka's ConfigResource.Type codes as the
// protocol uses them (2 topic, 4 broker, 32 group, 64 the KIP-1279
// mirror).
type ConfigResourceType int8

const (
	ConfigResourceTopic  ConfigResourceType = 2
	ConfigResourceBroker ConfigResourceType = 4
	// ConfigResourceGroup holds a consumer, share or streams group's own
	// configs (Kafka's ConfigResource.Type.GROUP, KIP-848 and KIP-932),
	// named after the group. The group need not exist: Kafka stores them
	// for any group id, before its first member joins.
	ConfigResourceGroup ConfigResourceType = 32
	// ConfigResourceMirror holds a cluster mirror's configs, named after
	// the mirror. 64 is the prototypes' ConfigResource.Type MIRROR
	// (aiven/kafka@cec72d23) / CLUSTER_MIRROR (showuon/kafka), the next
	// free bit after GROUP (32); the digest names the type but not its
	// code. (16 is Kafka's CLIENT_METRICS.)
	ConfigResourceMirror ConfigResourceType = 64
)

// ConfigResource names a config target. Broker "" is the cluster-wide
// default broker resource.
type ConfigResource struct {
	Type ConfigResourceType
	Name string
}

// ACLBinding is one access control entry on a resource pattern (Kafka's
// AccessControlEntryRecord). The int8 codes are the protocol's.
type ACLBinding struct {
	ID             Uuid
	ResourceType   int8
	ResourceName   string
	PatternType    int8
	Principal      string
	Host           string
	Operation      int8
	PermissionType int8
}

// TopicNames returns the topic names sorted.
func (img *Image) TopicNames() []string {
	names := make([]string, 0, len(img.Topics))
	for n := range img.Topics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Partition returns a partition of a topic.
func (img *Image) Partition(topic string, index int32) (*Partition, bool) {
	t, ok := img.Topics[topic]
	if !ok || index < 0 || int(index) >= len(t.Partitions) {
		return nil, false
	}
	return t.Partitions[index], true
}

// UnfencedBrokers returns the ids of the registered brokers that are not
// fenced, sorted.
func (img *Image) UnfencedBrokers() []int32 {
	ids := make([]int32, 0, len(img.Brokers))
	for id, b := range img.Brokers {
		if !b.Fenced {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// ActiveBrokers returns the ids of the brokers that are neither fenced nor
// in controlled shutdown, sorted: those new replicas are placed on first,
// and the only ones a new partition's leader is chosen from.
func (img *Image) ActiveBrokers() []int32 {
	ids := make([]int32, 0, len(img.Brokers))
	for id := range img.Brokers {
		if img.BrokerActive(id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// InactiveBrokers returns the ids of the registered brokers that are fenced
// or in controlled shutdown, sorted.
func (img *Image) InactiveBrokers() []int32 {
	ids := make([]int32, 0, len(img.Brokers))
	for id := range img.Brokers {
		if !img.BrokerActive(id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// InternalTopicReplicationFactor is the replication factor an internal
// topic (__consumer_offsets, __mirror_state) that asks for want is created
// with: want, lowered only where fewer brokers are registered, as on a
// single node, which can never hold three replicas. A broker that is down
// or stopping does not lower it: it gets its replica, out of the ISR until
// it is back (placeReplicas), so the topic does not keep a lower factor for
// good. Kafka fails the creation where too few brokers are registered;
// lowering keeps a single node's groups and mirrors working without the
// factor set by hand.
func (img *Image) InternalTopicReplicationFactor(want int16) int16 {
	return max(1, min(want, int16(len(img.Brokers))))
}

// BrokerActive reports whether a broker is registered, unfenced and not in
// controlled shutdown: one that may lead and join ISRs
// (ClusterControlManager.isActive).
func (img *Image) BrokerActive(id int32) bool {
	b, ok := img.Brokers[id]
	return ok && !b.Fenced && !b.InControlledShutdown
}

// TopicConfig returns a topic's dynamic configs (nil if none).
func (img *Image) TopicConfig(topic string) map[string]string {
	return img.Configs[ConfigResource{Type: ConfigResourceTopic, Name: topic}]
}

// GroupConfig returns a group's dynamic configs (nil if none).
func (img *Image) GroupConfig(group string) map[string]string {
	return img.Configs[ConfigResource{Type: ConfigResourceGroup, Name: group}]
}
