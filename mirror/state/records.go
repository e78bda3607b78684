package state

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/mirror/partition"
)

// The record layouts of __mirror_state, Kafka coordinator style (a key and
// a value, each starting with an int16 version; kbin encoding, non-flexible
// like the seed's MirrorPartitionStateKey). The digest recommends its
// "Gen B" record (§4.1): one record per mirror partition, keyed by
// mirrorName:topicId:partition, valued by the WriteMirrorStates fields.
//
//	MirrorPartitionStateKey v0:
//	  Version          int16  = 0
//	  MirrorName       string (int16 length)
//	  TopicId          uuid   (16 bytes)
//	  Partition        int32
//
//	MirrorPartitionStateValue v0 (the digest's Gen B field order):
//	  Version          int16  = 0
//	  State            int8   (partition.State: v4 values, UNKNOWN −1)
//	  StateEpoch       int32
//	  LeaderEpoch      int32
//	  LastMirrorEpoch  int32
//	  LastMirrorOffset int64
//	  ErrorMessage     nullable string (int16 length, −1 = null)
//	  RetryAttempt     int32  (−1 = non-retryable, v4's NON_RETRYABLE_ATTEMPT)
//	  PrevState        int8
//
// A null value is a tombstone. Later value versions may only append
// fields, so a reader decodes the v0 prefix of any newer version; a key of
// another version (the prototypes' older record types, say) is skipped on
// load, as Kafka's loader skips unknown record types.
const (
	keyVersion   int16 = 0
	valueVersion int16 = 0
)

// errUnknownKeyVersion marks a key this coordinator does not read.
var errUnknownKeyVersion = errors.New("unknown __mirror_state key version")

// encodeKey is the record key of k.
func encodeKey(k Key) []byte {
	b := make([]byte, 0, 2+2+len(k.Mirror)+16+4)
	b = kbin.AppendInt16(b, keyVersion)
	b = kbin.AppendString(b, k.Mirror)
	b = kbin.AppendUuid(b, k.TopicID)
	return kbin.AppendInt32(b, k.Partition)
}

// decodeKey reads a record key; errUnknownKeyVersion for another version.
func decodeKey(b []byte) (Key, error) {
	r := kbin.Reader{Src: b}
	v := r.Int16()
	if !r.Ok() {
		return Key{}, fmt.Errorf("__mirror_state key of %d bytes has no version", len(b))
	}
	if v != keyVersion {
		return Key{}, fmt.Errorf("%w %d", errUnknownKeyVersion, v)
	}
	k := Key{Mirror: r.String(), TopicID: r.Uuid(), Partition: r.Int32()}
	if err := runtime.DecodeComplete(&r); err != nil {
		return Key{}, fmt.Errorf("decoding __mirror_state key: %w", err)
	}
	return k, nil
}

// encodeValue is the record value of rec.
func encodeValue(rec partition.Record) []byte {
	b := make([]byte, 0, 2+1+4+4+4+8+2+len(rec.ErrorMessage)+4+1)
	b = kbin.AppendInt16(b, valueVersion)
	b = kbin.AppendInt8(b, int8(rec.State))
	b = kbin.AppendInt32(b, rec.StateEpoch)
	b = kbin.AppendInt32(b, rec.LeaderEpoch)
	b = kbin.AppendInt32(b, rec.LastMirrorEpoch)
	b = kbin.AppendInt64(b, rec.LastMirrorOffset)
	var msg *string
	if rec.ErrorMessage != "" {
		msg = &rec.ErrorMessage
	}
	b = kbin.AppendNullableString(b, msg)
	b = kbin.AppendInt32(b, rec.RetryAttempt)
	return kbin.AppendInt8(b, int8(rec.PrevState))
}

// decodeValue reads a non-null record value.
func decodeValue(b []byte) (partition.Record, error) {
	r := kbin.Reader{Src: b}
	v := r.Int16()
	if r.Ok() && v < 0 {
		return partition.Record{}, fmt.Errorf("__mirror_state value has invalid version %d", v)
	}
	rec := partition.Record{
		State:            partition.State(r.Int8()),
		StateEpoch:       r.Int32(),
		LeaderEpoch:      r.Int32(),
		LastMirrorEpoch:  r.Int32(),
		LastMirrorOffset: r.Int64(),
	}
	if msg := r.NullableString(); msg != nil {
		rec.ErrorMessage = *msg
	}
	rec.RetryAttempt = r.Int32()
	rec.PrevState = partition.State(r.Int8())
	if !r.Ok() {
		return partition.Record{}, fmt.Errorf("decoding __mirror_state value v%d of %d bytes: truncated", v, len(b))
	}
	if v == valueVersion {
		if err := runtime.DecodeComplete(&r); err != nil {
			return partition.Record{}, fmt.Errorf("decoding __mirror_state value: %w", err)
		}
	}
	return rec, nil
}

// stateRecord is one record to append: a nil value is a tombstone.
type stateRecord struct {
	key   Key
	value *partition.Record
}

// buildBatch encodes records as one uncompressed v2 batch for an append
// as leader (the log assigns offsets and the leader epoch).
func buildBatch(recs []stateRecord, nowMs int64) ([]byte, error) {
	pairs := make([]coordinator.KeyValue, len(recs))
	for i, r := range recs {
		pairs[i].Key = encodeKey(r.key)
		if r.value != nil {
			pairs[i].Value = encodeValue(*r.value)
		}
	}
	return coordinator.BuildBatch(pairs, nowMs)
}
