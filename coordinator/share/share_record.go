package share

import (
	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/storage/record"
)

// shareRecord is one record of __share_group_state, decoded: a snapshot,
// an update, or a tombstone of a share-partition.
type shareRecord struct {
	key       Key
	typ       int16 // recordTypeSnapshot or recordTypeUpdate
	tombstone bool
	snapshot  SnapshotValue // typ snapshot, not a tombstone
	update    UpdateValue   // typ update
}

func snapshotRecord(k Key, v SnapshotValue) shareRecord {
	return shareRecord{key: k, typ: recordTypeSnapshot, snapshot: v}
}

func updateRecord(k Key, v UpdateValue) shareRecord {
	return shareRecord{key: k, typ: recordTypeUpdate, update: v}
}

// tombstoneRecord removes k's state; it is written with a snapshot key, as
// Kafka's newShareStateTombstoneRecord does.
func tombstoneRecord(k Key) shareRecord {
	return shareRecord{key: k, typ: recordTypeSnapshot, tombstone: true}
}

// replay applies r to m.
func (r shareRecord) replay(m states) {
	switch {
	case r.tombstone:
		m.replayTombstone(r.key)
	case r.typ == recordTypeSnapshot:
		m.replaySnapshot(r.key, r.snapshot)
	default:
		m.replayUpdate(r.key, r.update)
	}
}

// encode is r as the coordinator runtime appends it.
func (r shareRecord) encode() runtime.Record {
	rec := runtime.Record{Key: EncodeKey(r.typ, r.key)}
	switch {
	case r.tombstone:
	case r.typ == recordTypeSnapshot:
		rec.Value = r.snapshot.Encode()
	default:
		rec.Value = r.update.Encode()
	}
	return rec
}

// decodeRecord reads a record of the log; errUnknownRecord for a type or
// version this coordinator does not read. A tombstone of either key type
// removes the share-partition.
func decodeRecord(rec record.Record) (shareRecord, error) {
	typ, k, err := DecodeKey(rec.Key)
	if err != nil {
		return shareRecord{}, err
	}
	r := shareRecord{key: k, typ: typ}
	switch {
	case rec.ValueLen < 0:
		r.tombstone = true
	case typ == recordTypeSnapshot:
		r.snapshot, err = DecodeSnapshotValue(rec.Value)
	default:
		r.update, err = DecodeUpdateValue(rec.Value)
	}
	return r, err
}
