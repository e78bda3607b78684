package record

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ControlMirrorPidReset is the KIP-1279 control record type that expires
// every producer-state entry: a barrier written when a mirror topic stops, so
// local producers reusing the source's producer ids start clean. Type ids
// 0-6 are Kafka's (ControlRecordType.java); 7 follows KRAFT_VOTERS.
const ControlMirrorPidReset kmsg.ControlRecordKeyType = 7

// MirrorPidResetVersion is the MirrorPidResetRecord version we write.
const MirrorPidResetVersion int16 = 0

// controlBatchLimit bounds what a control batch may decompress to: it holds
// one record with a four-byte key and a small value.
const controlBatchLimit = 1 << 20

// OpenRecords returns a reader over b's records, decompressing through d
// when the batch is compressed (at most limit bytes). close must be called.
func (d *Decompressor) OpenRecords(b Batch, limit int64) (rr *RecordReader, close func(), err error) {
	if b.Compression() == CodecNone {
		return NewUncompressedReader(b), func() {}, nil
	}
	s, err := d.Open(b.Compression(), b.Records(), limit)
	if err != nil {
		return nil, nil, err
	}
	return NewRecordReader(s, b.RecordCount()), s.Close, nil
}

// ControlType returns the type of a control batch's first record (a control
// batch holds one record; Kafka reads only the first, so do we).
func (d *Decompressor) ControlType(b Batch) (kmsg.ControlRecordKeyType, error) {
	if b.RecordCount() < 1 {
		return 0, invalidf("control batch at offset %d holds no records", b.BaseOffset())
	}
	rr, done, err := d.OpenRecords(b, controlBatchLimit)
	if err != nil {
		return 0, err
	}
	defer done()
	rec, err := rr.Next(true)
	if err != nil {
		return 0, err
	}
	return ParseControlKey(rec.Key)
}

// ParseControlKey decodes a control record key {version int16, type int16}.
func ParseControlKey(key []byte) (kmsg.ControlRecordKeyType, error) {
	if len(key) < 4 {
		return 0, invalidf("control record key is %d bytes, want at least 4", len(key))
	}
	var k kmsg.ControlRecordKey
	if err := k.ReadFrom(key); err != nil {
		return 0, invalidf("control record key: %v", err)
	}
	return k.Type, nil
}

// ParseEndTxnMarker decodes a commit/abort marker value {version int16,
// coordinatorEpoch int32}.
func ParseEndTxnMarker(value []byte) (kmsg.EndTxnMarker, error) {
	var m kmsg.EndTxnMarker
	if len(value) < 6 {
		return m, invalidf("end transaction marker value is %d bytes, want at least 6", len(value))
	}
	if err := m.ReadFrom(value); err != nil {
		return m, invalidf("end transaction marker: %v", err)
	}
	return m, nil
}

// ControlBatchSpec describes a control batch the broker writes.
type ControlBatchSpec struct {
	ProducerID           int64
	ProducerEpoch        int16
	PartitionLeaderEpoch int32
	Timestamp            int64
	// Transactional is set for commit/abort markers.
	Transactional bool
}

// EndTxnMarkerBatch builds a COMMIT or ABORT control batch for the
// producer's transaction (MemoryRecords.withEndTransactionMarker).
func EndTxnMarkerBatch(spec ControlBatchSpec, commit bool, coordinatorEpoch int32) Batch {
	typ := kmsg.ControlRecordKeyTypeAbort
	if commit {
		typ = kmsg.ControlRecordKeyTypeCommit
	}
	value := binary.BigEndian.AppendUint16(nil, 0) // marker version 0
	value = binary.BigEndian.AppendUint32(value, uint32(coordinatorEpoch))
	spec.Transactional = true
	return controlBatch(spec, typ, value)
}

// MirrorPidResetBatch builds the KIP-1279 MIRROR_PID_RESET control batch.
// Its value is the flexible MirrorPidResetRecord {Version int16} followed by
// an empty tagged-field section, as Kafka's generated messages encode it.
func MirrorPidResetBatch(spec ControlBatchSpec) Batch {
	value := binary.BigEndian.AppendUint16(nil, uint16(MirrorPidResetVersion))
	value = append(value, 0) // no tagged fields
	return controlBatch(spec, ControlMirrorPidReset, value)
}

func controlBatch(spec ControlBatchSpec, typ kmsg.ControlRecordKeyType, value []byte) Batch {
	key := binary.BigEndian.AppendUint16(nil, 0) // control key version 0
	key = binary.BigEndian.AppendUint16(key, uint16(typ))
	b, err := Build(BatchSpec{
		PartitionLeaderEpoch: spec.PartitionLeaderEpoch,
		ProducerID:           spec.ProducerID,
		ProducerEpoch:        spec.ProducerEpoch,
		BaseSequence:         NoSequence,
		Transactional:        spec.Transactional,
		Control:              true,
		BaseTimestamp:        spec.Timestamp,
	}, []Record{{Key: key, KeyLen: 4, Value: value, ValueLen: int32(len(value))}}, nil)
	if err != nil {
		// Uncompressed building cannot fail.
		panic(err) // lint:ignore panic — building an uncompressed batch from valid inputs cannot fail
	}
	return b
}

// isControlType reports whether a control batch's record has the given type;
// used by tests and by the mirror to recognise its own barrier.
func isControlType(d *Decompressor, b Batch, typ kmsg.ControlRecordKeyType) bool {
	if !b.IsControl() {
		return false
	}
	t, err := d.ControlType(b)
	return err == nil && t == typ
}

// IsMirrorPidReset reports whether b is a MIRROR_PID_RESET control batch.
func (d *Decompressor) IsMirrorPidReset(b Batch) bool {
	return isControlType(d, b, ControlMirrorPidReset)
}
