package share

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/raftmeta"
)

// The records of __share_group_state, framed as Kafka's coordinator
// records are (CoordinatorRecordSerde): the key is an int16 record type
// followed by the key message, the value an int16 version followed by the
// value message; a null value is a tombstone. The layouts are those of
// share-coordinator/src/main/resources/common/message (Kafka 4.1/4.2):
//
//	ShareSnapshotKey (type 0) and ShareUpdateKey (type 1), not flexible:
//	  GroupId    string (int16 length)
//	  TopicId    uuid
//	  Partition  int32
//
//	ShareSnapshotValue v0, flexible:
//	  SnapshotEpoch, StateEpoch, LeaderEpoch  int32
//	  StartOffset                             int64
//	  CreateTimestamp, WriteTimestamp         int64
//	  StateBatches  compact array of {FirstOffset int64, LastOffset int64,
//	                DeliveryState int8, DeliveryCount int16, tags}
//	  tags; tag 0: DeliveryCompleteCount int32 (KIP-1226), absent = -1
//
//	ShareUpdateValue v0, flexible:
//	  SnapshotEpoch, LeaderEpoch  int32
//	  StartOffset                 int64 (-1: not updated)
//	  StateBatches                as above
//	  tags; tag 0: DeliveryCompleteCount int32 (KIP-1226), absent = -1
//
// A tombstone is always written with a ShareSnapshotKey
// (ShareCoordinatorRecordHelpers.newShareStateTombstoneRecord).
const (
	recordTypeSnapshot int16 = 0
	recordTypeUpdate   int16 = 1

	valueVersion int16 = 0

	// tagDeliveryCompleteCount is the tag of DeliveryCompleteCount in both
	// values.
	tagDeliveryCompleteCount = 0
)

// errUnknownRecord marks a record of a type or value version this
// coordinator does not read; loading skips it, as Kafka's
// CoordinatorLoaderImpl skips an unknown record type (a leftover of an
// aborted upgrade).
var errUnknownRecord = errors.New("unknown __share_group_state record")

// Delivery states of a state batch (RecordState): only these are
// persisted; ACQUIRED is transient.
const (
	DeliveryStateAvailable    int8 = 0
	DeliveryStateAcknowledged int8 = 2
	DeliveryStateArchived     int8 = 4
)

// StateBatch is the delivery state of a range of offsets
// (PersisterStateBatch).
type StateBatch struct {
	FirstOffset   int64
	LastOffset    int64
	DeliveryState int8
	DeliveryCount int16
}

// SnapshotValue is a ShareSnapshotValue: the whole state of a
// share-partition.
type SnapshotValue struct {
	SnapshotEpoch   int32
	StateEpoch      int32
	LeaderEpoch     int32
	StartOffset     int64
	CreateTimestamp int64
	WriteTimestamp  int64
	StateBatches    []StateBatch
	// DeliveryCompleteCount is the number of offsets at or past the start
	// offset whose delivery completed (KIP-1226); -1 when unknown.
	DeliveryCompleteCount int32
}

// UpdateValue is a ShareUpdateValue: a change to the state of the
// snapshot SnapshotEpoch names.
type UpdateValue struct {
	SnapshotEpoch int32
	LeaderEpoch   int32
	// StartOffset is -1 when the start offset does not change.
	StartOffset  int64
	StateBatches []StateBatch
	// DeliveryCompleteCount is as in SnapshotValue.
	DeliveryCompleteCount int32
}

// EncodeKey is the record key of k's record of type typ.
func EncodeKey(typ int16, k Key) []byte {
	b := make([]byte, 0, 2+2+len(k.GroupID)+16+4)
	b = kbin.AppendInt16(b, typ)
	b = kbin.AppendString(b, k.GroupID)
	b = kbin.AppendUuid(b, k.TopicID)
	return kbin.AppendInt32(b, k.Partition)
}

// DecodeKey reads a record key: its type and share-partition.
// errUnknownRecord for a type other than snapshot and update.
func DecodeKey(b []byte) (int16, Key, error) {
	r := kbin.Reader{Src: b}
	typ := r.Int16()
	if !r.Ok() {
		return 0, Key{}, fmt.Errorf("__share_group_state key of %d bytes has no record type", len(b))
	}
	if typ != recordTypeSnapshot && typ != recordTypeUpdate {
		return typ, Key{}, fmt.Errorf("%w type %d", errUnknownRecord, typ)
	}
	k := Key{GroupID: r.String(), TopicID: raftmeta.Uuid(r.Uuid()), Partition: r.Int32()}
	if err := runtime.DecodeComplete(&r); err != nil {
		return typ, Key{}, fmt.Errorf("decoding __share_group_state key: %w", err)
	}
	return typ, k, nil
}

// Encode is the record value of v.
func (v SnapshotValue) Encode() []byte {
	b := make([]byte, 0, 2+4*3+8*3+1+len(v.StateBatches)*20+8)
	b = kbin.AppendInt16(b, valueVersion)
	b = kbin.AppendInt32(b, v.SnapshotEpoch)
	b = kbin.AppendInt32(b, v.StateEpoch)
	b = kbin.AppendInt32(b, v.LeaderEpoch)
	b = kbin.AppendInt64(b, v.StartOffset)
	b = kbin.AppendInt64(b, v.CreateTimestamp)
	b = kbin.AppendInt64(b, v.WriteTimestamp)
	b = appendBatches(b, v.StateBatches)
	return appendDeliveryCompleteCount(b, v.DeliveryCompleteCount)
}

// DecodeSnapshotValue reads a non-null ShareSnapshotValue.
func DecodeSnapshotValue(b []byte) (SnapshotValue, error) {
	r, err := valueReader(b)
	if err != nil {
		return SnapshotValue{}, err
	}
	v := SnapshotValue{
		SnapshotEpoch:   r.Int32(),
		StateEpoch:      r.Int32(),
		LeaderEpoch:     r.Int32(),
		StartOffset:     r.Int64(),
		CreateTimestamp: r.Int64(),
		WriteTimestamp:  r.Int64(),
	}
	v.StateBatches = readBatches(&r)
	v.DeliveryCompleteCount = readDeliveryCompleteCount(&r)
	if err := runtime.DecodeComplete(&r); err != nil {
		return SnapshotValue{}, fmt.Errorf("decoding ShareSnapshotValue: %w", err)
	}
	return v, nil
}

// Encode is the record value of v.
func (v UpdateValue) Encode() []byte {
	b := make([]byte, 0, 2+4*2+8+1+len(v.StateBatches)*20+8)
	b = kbin.AppendInt16(b, valueVersion)
	b = kbin.AppendInt32(b, v.SnapshotEpoch)
	b = kbin.AppendInt32(b, v.LeaderEpoch)
	b = kbin.AppendInt64(b, v.StartOffset)
	b = appendBatches(b, v.StateBatches)
	return appendDeliveryCompleteCount(b, v.DeliveryCompleteCount)
}

// DecodeUpdateValue reads a non-null ShareUpdateValue.
func DecodeUpdateValue(b []byte) (UpdateValue, error) {
	r, err := valueReader(b)
	if err != nil {
		return UpdateValue{}, err
	}
	v := UpdateValue{
		SnapshotEpoch: r.Int32(),
		LeaderEpoch:   r.Int32(),
		StartOffset:   r.Int64(),
	}
	v.StateBatches = readBatches(&r)
	v.DeliveryCompleteCount = readDeliveryCompleteCount(&r)
	if err := runtime.DecodeComplete(&r); err != nil {
		return UpdateValue{}, fmt.Errorf("decoding ShareUpdateValue: %w", err)
	}
	return v, nil
}

// valueReader reads a value's version and returns a reader at its first
// field; errUnknownRecord for a version other than 0.
func valueReader(b []byte) (kbin.Reader, error) {
	r := kbin.Reader{Src: b}
	v := r.Int16()
	if !r.Ok() {
		return r, fmt.Errorf("__share_group_state value of %d bytes has no version", len(b))
	}
	if v != valueVersion {
		return r, fmt.Errorf("%w value version %d", errUnknownRecord, v)
	}
	return r, nil
}

// appendBatches appends the compact array of state batches, each with no
// tagged fields.
func appendBatches(b []byte, batches []StateBatch) []byte {
	b = kbin.AppendCompactArrayLen(b, len(batches))
	for _, sb := range batches {
		b = kbin.AppendInt64(b, sb.FirstOffset)
		b = kbin.AppendInt64(b, sb.LastOffset)
		b = kbin.AppendInt8(b, sb.DeliveryState)
		b = kbin.AppendInt16(b, sb.DeliveryCount)
		b = kbin.AppendUvarint(b, 0)
	}
	return b
}

// readBatches reads the compact array of state batches, skipping their
// tagged fields. A null array reads as empty.
func readBatches(r *kbin.Reader) []StateBatch {
	n := r.CompactArrayLen()
	if n <= 0 || !r.Ok() {
		return nil
	}
	// Each batch takes at least 20 bytes: a length past what is left is
	// corrupt, and must not size the allocation.
	if int(n) > len(r.Src)/20 {
		invalidate(r)
		return nil
	}
	out := make([]StateBatch, n)
	for i := range out {
		out[i] = StateBatch{FirstOffset: r.Int64(), LastOffset: r.Int64(), DeliveryState: r.Int8(), DeliveryCount: r.Int16()}
		skipTags(r, nil)
	}
	return out
}

// appendDeliveryCompleteCount appends a value's tagged fields: the
// DeliveryCompleteCount, only when it is not the default -1 (as Kafka's
// generated writers leave out a tagged field at its default).
func appendDeliveryCompleteCount(b []byte, n int32) []byte {
	if n == -1 {
		return kbin.AppendUvarint(b, 0)
	}
	b = kbin.AppendUvarint(b, 1)
	b = kbin.AppendUvarint(b, tagDeliveryCompleteCount)
	b = kbin.AppendUvarint(b, 4)
	return kbin.AppendInt32(b, n)
}

// readDeliveryCompleteCount reads a value's tagged fields: the
// DeliveryCompleteCount (-1 when absent), skipping unknown tags.
func readDeliveryCompleteCount(r *kbin.Reader) int32 {
	n := int32(-1)
	skipTags(r, func(tag uint32, data []byte) {
		if tag == tagDeliveryCompleteCount {
			tr := kbin.Reader{Src: data}
			if v := tr.Int32(); tr.Ok() && len(tr.Src) == 0 {
				n = v
			} else {
				invalidate(r) // a malformed known field fails the decode
			}
		}
	})
	return n
}

// skipTags reads a tagged-field section, handing each field to seen (if
// not nil).
func skipTags(r *kbin.Reader, seen func(tag uint32, data []byte)) {
	for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
		tag := r.Uvarint()
		size := r.Uvarint()
		data := r.Span(int(size))
		if r.Ok() && seen != nil {
			seen(tag, data)
		}
	}
}

// invalidate marks r as having failed: Complete reports it.
func invalidate(r *kbin.Reader) { r.Span(-1) }
