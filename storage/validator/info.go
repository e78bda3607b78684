package validator

import "github.com/strait-io/strait/storage/record"

// Info describes an accepted append, as Kafka's LogAppendInfo does for the
// fields the log needs to write segments and indexes.
type Info struct {
	// Batches are the validated batches, slices of the caller's buffer.
	Batches []record.Batch
	// FirstOffset and LastOffset span the append; both are -1 for an empty
	// replicated append.
	FirstOffset, LastOffset int64
	// MaxTimestamp is the greatest batch max timestamp (the append time for
	// LogAppendTime topics), or record.NoTimestamp.
	MaxTimestamp int64
	// OffsetOfMaxTimestamp is the last offset of the first batch holding
	// MaxTimestamp (Kafka's shallowOffsetOfMaxTimestamp: the time index
	// points at batches), or -1 when no batch has a timestamp.
	OffsetOfMaxTimestamp int64
	// NumRecords is the sum of the batches' record counts.
	NumRecords int64
	// Bytes is the size of all batches.
	Bytes int
	// Compressed is set when any batch is compressed.
	Compressed bool
}

// emptyInfo is the Info of an append that holds no batch (UnifiedLog uses
// UnknownOffset and -1 for the same case).
func emptyInfo() Info {
	return Info{
		FirstOffset:          -1,
		LastOffset:           -1,
		MaxTimestamp:         record.NoTimestamp,
		OffsetOfMaxTimestamp: -1,
	}
}

// addBatch folds an accepted batch (with its final header) into the info.
func (in *Info) addBatch(b record.Batch) {
	if len(in.Batches) == 0 {
		in.FirstOffset = b.BaseOffset()
	}
	in.Batches = append(in.Batches, b)
	in.LastOffset = b.LastOffset()
	in.NumRecords += int64(b.RecordCount())
	in.Bytes += len(b)
	if b.Compression() != record.CodecNone {
		in.Compressed = true
	}
	// Strictly greater, so ties keep the first batch, as
	// analyzeAndValidateRecords does.
	if b.MaxTimestamp() > in.MaxTimestamp {
		in.MaxTimestamp = b.MaxTimestamp()
		in.OffsetOfMaxTimestamp = b.LastOffset()
	}
}

// Split cuts a replicated append into runs of consecutive batches of at
// most maxBytes each (a batch larger than maxBytes is a run of its own),
// so a fetched set larger than segment.bytes is appended over several
// segments, each run rolling the log as needed. The runs' batches are the
// same slices of the caller's buffer.
func (in Info) Split(maxBytes int) []Info {
	if in.Bytes <= maxBytes || len(in.Batches) <= 1 {
		return []Info{in}
	}
	var out []Info
	cur := emptyInfo()
	for _, b := range in.Batches {
		if len(cur.Batches) > 0 && cur.Bytes+len(b) > maxBytes {
			out = append(out, cur)
			cur = emptyInfo()
		}
		cur.addBatch(b)
	}
	return append(out, cur)
}
