package bench

import (
	"encoding/binary"
	"math/rand/v2"
)

// minPoolBytes keeps a pool far larger than any batch, so the values in one
// batch are all different: a codec cannot shrink a batch by finding one
// value repeated, which would make --compression flatter the broker.
const minPoolBytes = 8 << 20

// valuePool holds random record values generated once from a seeded PCG, so
// every run (and both brokers of a side-by-side run) sends the same bytes and
// producing them costs nothing per record.
type valuePool struct {
	buf   []byte
	size  int
	slots int64
}

func newValuePool(seed uint64, size int) *valuePool {
	n := max(minPoolBytes, 8*size)
	n -= n % max(size, 8)
	buf := make([]byte, n+8)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; i+8 <= len(buf); i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], rng.Uint64())
	}
	slots := int64(1)
	if size > 0 {
		slots = int64(n / size)
	}
	return &valuePool{buf: buf[:n], size: size, slots: slots}
}

// value is the n-th record's value. Callers must not write to it: kgo holds
// it until the batch is written, and other records share the bytes.
func (p *valuePool) value(n int64) []byte {
	off := (n % p.slots) * int64(p.size)
	return p.buf[off : off+int64(p.size) : off+int64(p.size)]
}
