package producer

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The snapshot layout is Kafka's ProducerSnapshot message, version 1, as
// ProducerStateManager.writeSnapshot encodes it (big-endian, not flexible):
//
//	Version         int16    0
//	Crc             uint32   2   CRC-32C of every byte after this field
//	ProducerEntries int32 count, then per entry:
//	  ProducerId            int64
//	  Epoch                 int16
//	  LastSequence          int32
//	  LastOffset            int64   -1 when no batch is retained
//	  OffsetDelta           int32
//	  Timestamp             int64   the entry's last timestamp
//	  CoordinatorEpoch      int32
//	  CurrentTxnFirstOffset int64   -1 without an ongoing transaction
//
// Only the newest batch of each producer is stored, so a restored producer
// detects duplicates of its last batch only, exactly as in Kafka.
const (
	// SnapshotVersion is the only ProducerSnapshot version Kafka defines.
	SnapshotVersion int16 = 1

	snapshotCRCOffset     = 2
	snapshotEntriesOffset = 6 // PRODUCER_ENTRIES_OFFSET: where the CRC starts
	snapshotHeaderSize    = snapshotEntriesOffset + 4
	snapshotEntrySize     = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeSnapshot returns the snapshot file content for entries, in the
// order given (the manager passes them sorted by producer id so that equal
// states give equal files).
func EncodeSnapshot(entries []Entry) []byte {
	buf := make([]byte, snapshotHeaderSize, snapshotHeaderSize+len(entries)*snapshotEntrySize)
	binary.BigEndian.PutUint16(buf, uint16(SnapshotVersion))
	binary.BigEndian.PutUint32(buf[snapshotEntriesOffset:], uint32(len(entries)))
	for i := range entries {
		e := &entries[i]
		txn := e.CurrentTxnFirstOffset
		if txn < 0 {
			txn = noTxn
		}
		buf = binary.BigEndian.AppendUint64(buf, uint64(e.ProducerID))
		buf = binary.BigEndian.AppendUint16(buf, uint16(e.ProducerEpoch))
		buf = binary.BigEndian.AppendUint32(buf, uint32(e.LastSeq()))
		buf = binary.BigEndian.AppendUint64(buf, uint64(e.LastDataOffset()))
		buf = binary.BigEndian.AppendUint32(buf, uint32(e.LastOffsetDelta()))
		buf = binary.BigEndian.AppendUint64(buf, uint64(e.LastTimestamp))
		buf = binary.BigEndian.AppendUint32(buf, uint32(e.CoordinatorEpoch))
		buf = binary.BigEndian.AppendUint64(buf, uint64(txn))
	}
	binary.BigEndian.PutUint32(buf[snapshotCRCOffset:], crc32.Checksum(buf[snapshotEntriesOffset:], castagnoli))
	return buf
}

// DecodeSnapshot parses a snapshot file (ProducerStateManager.readSnapshot).
// Any failure wraps ErrCorruptSnapshot.
func DecodeSnapshot(data []byte) ([]Entry, error) {
	if len(data) < 2 {
		return nil, fmt.Errorf("%w: %d bytes is too short for a version", ErrCorruptSnapshot, len(data))
	}
	if v := int16(binary.BigEndian.Uint16(data)); v != SnapshotVersion {
		return nil, fmt.Errorf("%w: unknown file version %d", ErrCorruptSnapshot, v)
	}
	if len(data) < snapshotHeaderSize {
		return nil, fmt.Errorf("%w: %d bytes is too short for the header", ErrCorruptSnapshot, len(data))
	}
	count := int64(int32(binary.BigEndian.Uint32(data[snapshotEntriesOffset:])))
	body := int64(len(data) - snapshotHeaderSize)
	// Kafka's generated reader only rejects a count larger than the bytes
	// left; we also reject trailing bytes, which our writer never produces.
	if count < 0 || count*snapshotEntrySize != body {
		return nil, fmt.Errorf("%w: %d entries do not fit %d bytes", ErrCorruptSnapshot, count, body)
	}
	stored := binary.BigEndian.Uint32(data[snapshotCRCOffset:])
	if computed := crc32.Checksum(data[snapshotEntriesOffset:], castagnoli); stored != computed {
		return nil, fmt.Errorf("%w: stored crc %d, computed crc %d", ErrCorruptSnapshot, stored, computed)
	}
	entries := make([]Entry, 0, count)
	for p := snapshotHeaderSize; p < len(data); p += snapshotEntrySize {
		b := data[p : p+snapshotEntrySize]
		e := Entry{
			ProducerID:            int64(binary.BigEndian.Uint64(b[0:])),
			ProducerEpoch:         int16(binary.BigEndian.Uint16(b[8:])),
			LastTimestamp:         int64(binary.BigEndian.Uint64(b[26:])),
			CoordinatorEpoch:      int32(binary.BigEndian.Uint32(b[34:])),
			CurrentTxnFirstOffset: int64(binary.BigEndian.Uint64(b[38:])),
		}
		if e.CurrentTxnFirstOffset < 0 {
			e.CurrentTxnFirstOffset = noTxn
		}
		if lastOffset := int64(binary.BigEndian.Uint64(b[14:])); lastOffset >= 0 {
			e.Batches = []BatchMetadata{{
				LastSeq:     int32(binary.BigEndian.Uint32(b[10:])),
				LastOffset:  lastOffset,
				OffsetDelta: int32(binary.BigEndian.Uint32(b[22:])),
				Timestamp:   e.LastTimestamp,
			}}
		}
		entries = append(entries, e)
	}
	return entries, nil
}
