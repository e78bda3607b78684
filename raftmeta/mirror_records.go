package raftmeta

// The metadata records of KIP-1279 cluster mirrors. A mirror is a
// MirrorRecord (its name, id and creation time) plus its source-connection
// configs, which are ConfigRecords of resource type MIRROR
// (ConfigResourceMirror) named after the mirror, as the seed stores them
// ("ConfigRecord entries with type MIRROR"). A topic joins a mirror
// through its topic config mirror.name (MirrorNameConfig) with the seed's
// .paused/.removed suffixes, and BumpLeaderEpochs writes
// PartitionChangeRecord.MinLeaderEpoch: neither needs a record of its own.
//
// The prototypes have no record for the mirror itself (digest §4.2: the
// CLUSTER_MIRROR config resource is the definition); Strait adds one so a
// mirror exists independently of its configs (deleting a config key cannot
// delete the mirror) and so a mirror recreated under the same name has a
// new id, which lets brokers tell its __mirror_state apart from the old
// one's.

// MirrorRecord creates a cluster mirror. Its ConfigRecords follow in the
// same batch.
type MirrorRecord struct {
	Name     string
	MirrorID Uuid
	// CreateTimeMs is when the controller created it (milliseconds since
	// the epoch, from the controller's clock: the FSM reads no clock).
	CreateTimeMs int64
}

// RemoveMirrorRecord deletes a mirror and its MIRROR configs, as
// RemoveTopicRecord drops a topic's configs. Topic configs naming the
// mirror are left alone (see Controller.DeleteMirror).
type RemoveMirrorRecord struct {
	MirrorID Uuid
}

func (*MirrorRecord) Type() RecordType       { return MirrorRecordType }
func (*RemoveMirrorRecord) Type() RecordType { return RemoveMirrorRecordType }
func (*MirrorRecord) Version() int8          { return 0 }
func (*RemoveMirrorRecord) Version() int8    { return 0 }

func (r *MirrorRecord) appendTo(b []byte) []byte {
	b = appendString(b, r.Name)
	b = appendUuid(b, r.MirrorID)
	return appendInt(b, r.CreateTimeMs)
}

func (r *RemoveMirrorRecord) appendTo(b []byte) []byte { return appendUuid(b, r.MirrorID) }

// decodeMirrorFields reads the fields of a mirror record of type t.
func decodeMirrorFields(t RecordType, d *decoder) Record {
	switch t {
	case MirrorRecordType:
		return &MirrorRecord{Name: d.string(), MirrorID: d.uuid(), CreateTimeMs: d.int64()}
	case RemoveMirrorRecordType:
		return &RemoveMirrorRecord{MirrorID: d.uuid()}
	}
	d.fail("unknown record type %d", uint8(t))
	return nil
}
