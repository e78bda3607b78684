package index

import (
	"encoding/binary"
	"fmt"
)

// AbortedTxnEntrySize is the size of one .txnindex entry (Kafka's
// AbortedTxn.TOTAL_SIZE): version int16, producer id, first offset, last
// offset and last stable offset, each int64, big-endian.
const AbortedTxnEntrySize = 34

// abortedTxnVersion is the only entry version Kafka has written
// (AbortedTxn.CURRENT_VERSION).
const abortedTxnVersion int16 = 0

// AbortedTxn is one aborted transaction of a segment: its producer, the
// offsets of its first record and of its abort marker, and the last stable
// offset when it was aborted (Kafka's AbortedTxn). READ_COMMITTED fetches
// return ProducerID and FirstOffset of the ones they overlap.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

func (t AbortedTxn) String() string {
	return fmt.Sprintf("AbortedTxn(producerId=%d, firstOffset=%d, lastOffset=%d, lastStableOffset=%d)",
		t.ProducerID, t.FirstOffset, t.LastOffset, t.LastStableOffset)
}

func (t AbortedTxn) encode() []byte {
	e := make([]byte, AbortedTxnEntrySize)
	binary.BigEndian.PutUint16(e, uint16(abortedTxnVersion))
	binary.BigEndian.PutUint64(e[2:], uint64(t.ProducerID))
	binary.BigEndian.PutUint64(e[10:], uint64(t.FirstOffset))
	binary.BigEndian.PutUint64(e[18:], uint64(t.LastOffset))
	binary.BigEndian.PutUint64(e[26:], uint64(t.LastStableOffset))
	return e
}

// decodeAbortedTxn reads entry i of buf. Kafka rejects only versions above
// the current one (and reads the version as a single byte); we read the
// int16 and reject anything but 0, since no other version exists.
func decodeAbortedTxn(buf []byte, i int) (AbortedTxn, error) {
	e := buf[i*AbortedTxnEntrySize : (i+1)*AbortedTxnEntrySize]
	if v := int16(binary.BigEndian.Uint16(e)); v != abortedTxnVersion {
		return AbortedTxn{}, fmt.Errorf("%w: %d in entry %d, expected %d", ErrUnknownTxnVersion, v, i, abortedTxnVersion)
	}
	return AbortedTxn{
		ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
		FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
		LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
		LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
	}, nil
}
