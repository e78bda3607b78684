package runtimetest

import (
	"testing"

	"github.com/strait-io/strait/storage/record"
)

func TestReadBatches(t *testing.T) {
	var batches []record.Batch
	for base := int64(0); base < 30; base += 10 {
		recs := make([]record.Record, 10)
		for i := range recs {
			recs[i] = record.Record{Value: []byte("v"), ValueLen: 1, KeyLen: -1}
		}
		b, err := record.Build(record.BatchSpec{BaseOffset: base, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
	}
	size := len(batches[0])
	for _, c := range []struct {
		from      int64
		maxBytes  int32
		wantBytes int
		wantNext  int64
	}{
		{from: 0, maxBytes: 1 << 20, wantBytes: 3 * size, wantNext: 30},
		{from: 15, maxBytes: 1 << 20, wantBytes: 2 * size, wantNext: 30},
		{from: 0, maxBytes: 1, wantBytes: size, wantNext: 10}, // the first batch always
		{from: 10, maxBytes: int32(2*size - 1), wantBytes: size, wantNext: 20},
		{from: 30, maxBytes: 1 << 20, wantBytes: 0, wantNext: 30},
	} {
		out, next := ReadBatches(batches, c.from, c.maxBytes)
		if len(out) != c.wantBytes || next != c.wantNext {
			t.Errorf("ReadBatches(from %d, max %d) = %d bytes, next %d; want %d bytes, next %d",
				c.from, c.maxBytes, len(out), next, c.wantBytes, c.wantNext)
		}
	}
}
