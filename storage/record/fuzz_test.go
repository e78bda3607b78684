package record

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReadBatch feeds arbitrary bytes to the batch splitter and every header
// accessor. Invariants: no panic; an accepted batch lies within the input
// and its Size matches its length field; iteration consumes exactly the
// accepted batches and stops with an error or at the end.
func FuzzReadBatch(f *testing.F) {
	c := NewCompressor()
	for _, codec := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		b, _ := Build(BatchSpec{BaseOffset: 7, ProducerID: 3, BaseSequence: 1, Codec: codec, BaseTimestamp: 99},
			[]Record{{KeyLen: -1, Value: []byte("value"), ValueLen: 5}, {Key: []byte("k"), KeyLen: 1, ValueLen: -1}}, c)
		f.Add([]byte(b))
		f.Add(append(bytes.Clone(b), b[:30]...))
	}
	f.Add([]byte(EndTxnMarkerBatch(ControlBatchSpec{ProducerID: 1}, true, 2)))
	f.Add([]byte{})
	f.Add(make([]byte, 61))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ReadBatch(data)
		if err == nil {
			if b.Size() != len(b) || len(b) > len(data) || len(b) < HeaderSize {
				t.Fatalf("accepted batch of %d bytes, Size %d, input %d", len(b), b.Size(), len(data))
			}
			_ = b.ValidCRC()
			_ = b.LastSequence()
			_, _ = b.Compression(), b.TimestampType()
			_ = b.Records()
		} else if err != io.ErrUnexpectedEOF {
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("error of unexpected type %T: %v", err, err)
			}
		}
		it := NewIter(data)
		total := 0
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			total += len(b)
		}
		if total != it.Pos() || (it.Err() == nil && total != len(data)) {
			t.Fatalf("iterated %d bytes, pos %d, err %v, input %d", total, it.Pos(), it.Err(), len(data))
		}
		// Decoding the records of whatever parsed must never panic either.
		if err == nil {
			d := NewDecompressor()
			rr, done, oerr := d.OpenRecords(b, 1<<20)
			if oerr == nil {
				for i := 0; i < 10000; i++ {
					if _, err := rr.Next(true); err != nil {
						break
					}
				}
				_ = rr.Finish()
				done()
			}
			if b.IsControl() {
				_, _ = d.ControlType(b)
			}
		}
	})
}
