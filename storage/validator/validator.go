package validator

import "github.com/strait-io/strait/storage/record"

// Validator validates appends. It holds no per-partition state, so one is
// shared by every log of a broker; it is safe for concurrent use.
type Validator struct {
	d *record.Decompressor
}

// New returns a Validator decompressing through d (its decoder pools are
// shared with whoever else holds d). A nil d gets a private Decompressor.
func New(d *record.Decompressor) *Validator {
	if d == nil {
		d = record.NewDecompressor()
	}
	return &Validator{d: d}
}

// splitBatches returns the whole batches in buf. A trailing partial batch is
// CORRUPT_MESSAGE, a batch with magic below 2 INVALID_RECORD (record.Iter).
//
// The batches are appended to dst: a caller passes an array of its own,
// on its stack, for the one batch of a produce (issue 29's allocation
// profile had this slice among each produce request's objects).
func splitBatches(buf []byte, dst []record.Batch) ([]record.Batch, error) {
	batches := dst
	it := record.NewIter(buf)
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		batches = append(batches, b)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return batches, nil
}
