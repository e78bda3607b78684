package share

import "context"

// PartitionKey names one share partition: a share group's view of one
// topic partition (Kafka's SharePartitionKey).
type PartitionKey struct {
	GroupID   string
	TopicID   [16]byte
	Partition int32
}

// StateBatch is a run of in-flight records in one delivery state, as the
// share coordinator stores it (WriteShareGroupState's StateBatch).
// DeliveryState is a RecordState: 0 available, 1 acquired, 2
// acknowledged, 4 archived.
type StateBatch struct {
	FirstOffset, LastOffset int64
	DeliveryState           int8
	DeliveryCount           int16
}

// PersistedState is a share partition's durable state: the share-partition
// start offset and the in-flight records at or after it.
//
// The manager writes the whole state every time: StartOffset and batches
// covering every in-flight offset from StartOffset to the end of the
// in-flight window, records a member still holds written as AVAILABLE
// (their lock dies with this leader). A persister may store each write as
// a snapshot, or merge it over the previous one as Kafka's share
// coordinator merges ShareUpdate records; the result is the same.
//
// StartOffset -1 (read back) means the state was initialized without a
// start offset: the partition starts where share.auto.offset.reset says.
type PersistedState struct {
	StateEpoch  int32
	LeaderEpoch int32
	StartOffset int64
	Batches     []StateBatch
}

// Persister stores share partition state durably: Kafka's Persister, which
// DefaultStatePersister implements with the share coordinator's
// InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState and
// DeleteShareGroupState RPCs. Errors unwrap to the kerr error the
// coordinator answered (FENCED_STATE_EPOCH, FENCED_LEADER_EPOCH,
// GROUP_ID_NOT_FOUND, UNKNOWN_TOPIC_OR_PARTITION, COORDINATOR_NOT_AVAILABLE,
// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS...). Calls may block; the
// manager never holds a lock across one.
type Persister interface {
	Initialize(ctx context.Context, key PartitionKey, stateEpoch int32, startOffset int64) error
	Read(ctx context.Context, key PartitionKey, leaderEpoch int32) (PersistedState, error) // kerr errors as the coordinator answers
	Write(ctx context.Context, key PartitionKey, st PersistedState) error
	Delete(ctx context.Context, key PartitionKey) error
}
