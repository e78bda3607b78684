package raftmeta

import "fmt"

// RecordType identifies a metadata record. The values are the apiKey of
// Kafka's record schema of the same name
// (metadata/src/main/resources/common/metadata/*.json), so a dump of our log
// reads like one of KRaft's.
type RecordType uint8

const (
	RegisterBrokerRecordType           RecordType = 0
	UnregisterBrokerRecordType         RecordType = 1
	TopicRecordType                    RecordType = 2
	PartitionRecordType                RecordType = 3
	ConfigRecordType                   RecordType = 4
	PartitionChangeRecordType          RecordType = 5
	FenceBrokerRecordType              RecordType = 7
	UnfenceBrokerRecordType            RecordType = 8
	RemoveTopicRecordType              RecordType = 9
	ProducerIdsRecordType              RecordType = 15
	BrokerRegistrationChangeRecordType RecordType = 17
	AccessControlEntryRecordType       RecordType = 18
	RemoveAccessControlEntryRecordType RecordType = 19
	// SCRAM credentials (scram.go).
	UserScramCredentialRecordType       RecordType = 11
	RemoveUserScramCredentialRecordType RecordType = 22
	// Client quotas (client_quotas.go).
	ClientQuotaRecordType RecordType = 14
	// The KIP-1279 mirror records are Strait's (mirror_records.go): their
	// numbers sit far above Kafka's apiKeys (0-27, 29 in a prototype) so an
	// upstream record never takes them.
	MirrorRecordType       RecordType = 200
	RemoveMirrorRecordType RecordType = 201
	// ForwardedRequestRecordType is Strait's too (forwarded.go).
	ForwardedRequestRecordType RecordType = 202
)

var recordTypeNames = map[RecordType]string{
	RegisterBrokerRecordType:            "RegisterBrokerRecord",
	UnregisterBrokerRecordType:          "UnregisterBrokerRecord",
	TopicRecordType:                     "TopicRecord",
	PartitionRecordType:                 "PartitionRecord",
	ConfigRecordType:                    "ConfigRecord",
	PartitionChangeRecordType:           "PartitionChangeRecord",
	FenceBrokerRecordType:               "FenceBrokerRecord",
	UnfenceBrokerRecordType:             "UnfenceBrokerRecord",
	RemoveTopicRecordType:               "RemoveTopicRecord",
	ProducerIdsRecordType:               "ProducerIdsRecord",
	BrokerRegistrationChangeRecordType:  "BrokerRegistrationChangeRecord",
	AccessControlEntryRecordType:        "AccessControlEntryRecord",
	RemoveAccessControlEntryRecordType:  "RemoveAccessControlEntryRecord",
	UserScramCredentialRecordType:       "UserScramCredentialRecord",
	RemoveUserScramCredentialRecordType: "RemoveUserScramCredentialRecord",
	ClientQuotaRecordType:               "ClientQuotaRecord",
	MirrorRecordType:                    "MirrorRecord",
	RemoveMirrorRecordType:              "RemoveMirrorRecord",
	ForwardedRequestRecordType:          "ForwardedRequestRecord",
	FeatureLevelRecordType:              "FeatureLevelRecord",
}

func (t RecordType) String() string {
	if n, ok := recordTypeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("RecordType(%d)", uint8(t))
}

// Record is one typed metadata record. A raft log entry carries a batch of
// records that the FSM applies atomically (Kafka's atomic record batches).
type Record interface {
	// Type is the record's type.
	Type() RecordType
	// Version is the record's schema version as encoded.
	Version() int8
	// appendTo appends the fields (not the type and version) to b.
	appendTo(b []byte) []byte
}

// NoLeaderChange in PartitionChangeRecord.Leader leaves the leader as it is
// (Kafka's LeaderConstants.NO_LEADER_CHANGE).
const NoLeaderChange int32 = -2

// NoLeader is a partition leader of -1: the partition is offline.
const NoLeader int32 = -1

// AssignedBrokerEpoch in RegisterBrokerRecord.BrokerEpoch makes the broker
// epoch the raft index of the batch holding the record, as Kafka's broker
// epoch is the offset of the RegisterBrokerRecord
// (ClusterControlManager.registerBroker): the controller cannot know the
// index before proposing, the FSM does when applying.
const AssignedBrokerEpoch int64 = -1

// RegisterBrokerRecord registers (or re-registers) a broker. A new
// incarnation gets a new epoch (usually AssignedBrokerEpoch); amending the
// registration of the same incarnation keeps it. Re-registration replaces
// the broker's endpoints, rack and fencing; it leaves controlled shutdown
// only for a new epoch.
type RegisterBrokerRecord struct {
	BrokerID      int32
	IncarnationID Uuid
	BrokerEpoch   int64
	EndPoints     []Endpoint
	Rack          string
	Fenced        bool
	// LogDirs are the ids of the broker's log directories (meta.properties
	// directory.id; Kafka's RegisterBrokerRecord v3+), from version 1. The
	// first holds the metadata log: its id is the node's directory id as a
	// member of the quorum (KIP-853).
	LogDirs []Uuid
}

// FenceBrokerRecord fences a broker at the given epoch: it stays registered
// but must not lead or be chosen for new replicas (issue 4 drives it).
type FenceBrokerRecord struct {
	ID    int32
	Epoch int64
}

// UnfenceBrokerRecord unfences a broker at the given epoch.
type UnfenceBrokerRecord struct {
	ID    int32
	Epoch int64
}

// BrokerRegistrationChangeRecord changes a registered broker's fencing or
// controlled-shutdown state at the given epoch (Kafka's record of the same
// name; Kafka uses it instead of Fence/UnfenceBrokerRecord from 3.3 on,
// Strait for controlled shutdown).
type BrokerRegistrationChangeRecord struct {
	BrokerID    int32
	BrokerEpoch int64
	// Fenced is BrokerRegistrationFencingChange: FenceChangeNone,
	// FenceChangeFence or FenceChangeUnfence.
	Fenced int8
	// InControlledShutdown is BrokerRegistrationInControlledShutdownChange:
	// 0 no change, 1 the broker entered controlled shutdown.
	InControlledShutdown int8
}

// BrokerRegistrationFencingChange values.
const (
	FenceChangeNone    int8 = 0
	FenceChangeFence   int8 = 1
	FenceChangeUnfence int8 = -1
)

// TopicRecord creates a topic; its PartitionRecords follow in the same batch.
type TopicRecord struct {
	Name    string
	TopicID Uuid
}

// PartitionRecord creates a partition (or replaces it wholesale).
type PartitionRecord struct {
	PartitionID    int32
	TopicID        Uuid
	Replicas       []int32
	ISR            []int32
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	// AddingReplicas and RemovingReplicas are the replicas an ongoing
	// reassignment adds and removes (KIP-455; reassign_records.go): both
	// empty when none is under way. Version 1 of the record.
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// PartitionChangeRecord changes a partition. Nil slices and a Leader of
// NoLeaderChange leave the field alone. Every change bumps the partition
// epoch. The leader epoch is bumped when Leader is set (even to the same
// broker, as in Kafka's PartitionRegistration.merge) or when MinLeaderEpoch
// is above the current epoch; the new epoch is then
// max(current+1, MinLeaderEpoch). MinLeaderEpoch is ours: KIP-1279 keeps a
// mirror partition's leader epoch at or above the source's
// (BumpLeaderEpochs); 0 means no minimum.
type PartitionChangeRecord struct {
	PartitionID    int32
	TopicID        Uuid
	ISR            []int32
	Leader         int32
	Replicas       []int32
	MinLeaderEpoch int32
	// AddingReplicas and RemovingReplicas replace the partition's (KIP-455;
	// nil: unchanged, empty: cleared). Version 1 of the record.
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// RemoveTopicRecord deletes a topic, its partitions and its configs.
type RemoveTopicRecord struct {
	TopicID Uuid
}

// ConfigRecord sets a dynamic config key of a resource; a nil Value
// deletes the key.
type ConfigRecord struct {
	ResourceType ConfigResourceType
	ResourceName string
	Name         string
	Value        *string
}

// ProducerIdsRecord hands the block of producer ids below NextProducerID to
// a broker (Kafka's ProducerIdControlManager).
type ProducerIdsRecord struct {
	BrokerID       int32
	BrokerEpoch    int64
	NextProducerID int64
}

// AccessControlEntryRecord stores one ACL.
type AccessControlEntryRecord struct {
	ACL ACLBinding
}

// RemoveAccessControlEntryRecord removes the ACL with this id.
type RemoveAccessControlEntryRecord struct {
	ID Uuid
}

func (*RegisterBrokerRecord) Type() RecordType  { return RegisterBrokerRecordType }
func (*FenceBrokerRecord) Type() RecordType     { return FenceBrokerRecordType }
func (*UnfenceBrokerRecord) Type() RecordType   { return UnfenceBrokerRecordType }
func (*TopicRecord) Type() RecordType           { return TopicRecordType }
func (*PartitionRecord) Type() RecordType       { return PartitionRecordType }
func (*PartitionChangeRecord) Type() RecordType { return PartitionChangeRecordType }
func (*RemoveTopicRecord) Type() RecordType     { return RemoveTopicRecordType }
func (*ConfigRecord) Type() RecordType          { return ConfigRecordType }
func (*ProducerIdsRecord) Type() RecordType     { return ProducerIdsRecordType }
func (*BrokerRegistrationChangeRecord) Type() RecordType {
	return BrokerRegistrationChangeRecordType
}
func (*AccessControlEntryRecord) Type() RecordType {
	return AccessControlEntryRecordType
}
func (*RemoveAccessControlEntryRecord) Type() RecordType {
	return RemoveAccessControlEntryRecordType
}

// Every record is at version 0 of Strait's encoding; a field added later
// bumps the version of that record and decode keeps reading the old ones.
func (*RegisterBrokerRecord) Version() int8           { return 1 }
func (*FenceBrokerRecord) Version() int8              { return 0 }
func (*UnfenceBrokerRecord) Version() int8            { return 0 }
func (*TopicRecord) Version() int8                    { return 0 }
func (*RemoveTopicRecord) Version() int8              { return 0 }
func (*ConfigRecord) Version() int8                   { return 0 }
func (*ProducerIdsRecord) Version() int8              { return 0 }
func (*BrokerRegistrationChangeRecord) Version() int8 { return 0 }
func (*AccessControlEntryRecord) Version() int8       { return 0 }
func (*RemoveAccessControlEntryRecord) Version() int8 { return 0 }

// maxRecordVersion is the newest version decode understands per type.
var maxRecordVersion = map[RecordType]int8{
	RegisterBrokerRecordType:            1, // v1: LogDirs
	TopicRecordType:                     0,
	PartitionRecordType:                 1,
	ConfigRecordType:                    0,
	PartitionChangeRecordType:           1,
	UnregisterBrokerRecordType:          0,
	FenceBrokerRecordType:               0,
	UnfenceBrokerRecordType:             0,
	RemoveTopicRecordType:               0,
	ProducerIdsRecordType:               0,
	BrokerRegistrationChangeRecordType:  0,
	AccessControlEntryRecordType:        0,
	RemoveAccessControlEntryRecordType:  0,
	UserScramCredentialRecordType:       0,
	RemoveUserScramCredentialRecordType: 0,
	ClientQuotaRecordType:               0,
	MirrorRecordType:                    0,
	RemoveMirrorRecordType:              0,
	ForwardedRequestRecordType:          0,
	FeatureLevelRecordType:              0,
}
