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
func splitBatches(buf []byte) ([]record.Batch, error) {
	var batches []record.Batch
	it := record.NewIter(buf)
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		batches = append(batches, b)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return batches, nil
}
