// Package runtimetest helps test coordinators built on coordinator/runtime
// with in-memory partitions.
package runtimetest

import "github.com/strait-io/strait/storage/record"

// ReadBatches answers a read of an in-memory partition the way the log
// does (storage.Log.Read with minOneMessage): the batches holding offsets
// from from on, whole, at most maxBytes of them but always the first. next
// is the offset after the last batch returned, from when none is.
func ReadBatches(batches []record.Batch, from int64, maxBytes int32) (out []byte, next int64) {
	next = from
	for _, b := range batches {
		if b.LastOffset() < from {
			continue
		}
		if len(out) > 0 && len(out)+len(b) > int(maxBytes) {
			break
		}
		out = append(out, b...)
		next = b.NextOffset()
	}
	return out, next
}
