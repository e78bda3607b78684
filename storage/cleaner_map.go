package storage

import (
	"crypto/sha256"
	"encoding/binary"
)

// offsetMapEntrySize is what one key costs in the offset map: a 16-byte
// key hash and an 8-byte offset.
const (
	offsetMapHashSize  = 16
	offsetMapEntrySize = offsetMapHashSize + 8
)

// offsetMap maps a key's hash to the latest offset seen for the key, in a
// fixed amount of memory (Kafka's SkimpyOffsetMap): an open-addressing
// table of hashes and offsets sized once, never grown. Keys are hashed
// with SHA-256 truncated to 128 bits rather than Kafka's MD5: a producer
// that could make two keys collide could make the cleaner drop the other
// key's latest record, and MD5 collisions are cheap to make.
//
// The cleaner puts keys in offset order, so put overwrites: the last put
// for a key is its latest offset.
type offsetMap struct {
	hashes  []byte  // slots × offsetMapHashSize
	offsets []int64 // -1 marks an empty slot
	size    int
	// latestOffset is the last offset the map covers: records past it were
	// not mapped and the cleaner keeps them (OffsetMap.latestOffset).
	latestOffset int64
}

// newOffsetMap makes a map of the given number of slots.
func newOffsetMap(slots int) *offsetMap {
	m := &offsetMap{
		hashes:       make([]byte, slots*offsetMapHashSize),
		offsets:      make([]int64, slots),
		latestOffset: -1,
	}
	for i := range m.offsets {
		m.offsets[i] = -1
	}
	return m
}

func (m *offsetMap) slots() int { return len(m.offsets) }

// utilization is the share of slots in use.
func (m *offsetMap) utilization() float64 {
	if m.slots() == 0 {
		return 0
	}
	return float64(m.size) / float64(m.slots())
}

func hashKey(key []byte) (h [offsetMapHashSize]byte) {
	sum := sha256.Sum256(key)
	copy(h[:], sum[:offsetMapHashSize])
	return h
}

// find returns the slot holding h, or the empty slot where it would go.
// The map is never full when called: put stops at the load factor.
func (m *offsetMap) find(h [offsetMapHashSize]byte) int {
	n := uint64(len(m.offsets))
	i := binary.BigEndian.Uint64(h[:8]) % n
	for {
		if m.offsets[i] < 0 || string(m.hashes[i*offsetMapHashSize:(i+1)*offsetMapHashSize]) == string(h[:]) {
			return int(i)
		}
		i = (i + 1) % n
	}
}

// put records offset as the key's latest.
func (m *offsetMap) put(key []byte, offset int64) {
	h := hashKey(key)
	i := m.find(h)
	if m.offsets[i] < 0 {
		copy(m.hashes[i*offsetMapHashSize:], h[:])
		m.size++
	}
	m.offsets[i] = offset
	m.latestOffset = offset
}

// get returns the key's latest offset, or -1 when the key is not mapped.
func (m *offsetMap) get(key []byte) int64 {
	return m.offsets[m.find(hashKey(key))]
}

// updateLatestOffset moves latestOffset forward (a batch or segment fully
// read without filling the map).
func (m *offsetMap) updateLatestOffset(offset int64) {
	m.latestOffset = max(m.latestOffset, offset)
}
