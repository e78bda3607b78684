package share

import (
	"cmp"
	"slices"
)

// combineBatches merges the state batches a share-partition had with new
// ones into sorted, non-overlapping batches, dropping what lies below
// startOffset (-1: nothing is dropped): Kafka's
// PersisterStateBatchCombiner. Where batches overlap, each offset takes
// the state of the batch with the higher delivery count, then the higher
// delivery state (a record only moves forward: a later delivery, or
// AVAILABLE to ACKNOWLEDGED or ARCHIVED); adjacent batches with the same
// count and state are joined. Kafka's combiner reaches the same states
// offset by offset; it may leave two touching batches with the same
// state unjoined where this one joins them.
//
// It sweeps the batches' boundaries, so its cost depends on the number of
// batches, not on how many offsets they span. A batch whose last offset
// is below its first covers nothing and is dropped.
func combineBatches(soFar, newer []StateBatch, startOffset int64) []StateBatch {
	all := make([]StateBatch, 0, len(soFar)+len(newer))
	for _, b := range slices.Concat(soFar, newer) {
		if startOffset != -1 {
			if b.LastOffset < startOffset {
				continue
			}
			b.FirstOffset = max(b.FirstOffset, startOffset)
		}
		if b.LastOffset >= b.FirstOffset {
			all = append(all, b)
		}
	}
	switch len(all) {
	case 0:
		return nil // as decoding an empty array gives
	case 1:
		return all
	}
	// Every batch starts at its first offset and ends after its last: the
	// state is constant between two consecutive boundaries.
	bounds := make([]int64, 0, 2*len(all))
	for _, b := range all {
		bounds = append(bounds, b.FirstOffset, b.LastOffset+1)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	slices.SortFunc(all, func(a, b StateBatch) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })

	var out []StateBatch
	var active []StateBatch // the batches covering the current range
	next := 0               // the first batch of all not yet active
	for i := 0; i+1 < len(bounds); i++ {
		from, to := bounds[i], bounds[i+1]-1
		for next < len(all) && all[next].FirstOffset <= from {
			active = append(active, all[next])
			next++
		}
		active = slices.DeleteFunc(active, func(b StateBatch) bool { return b.LastOffset < from })
		if len(active) == 0 {
			continue
		}
		win := slices.MaxFunc(active, comparePriority)
		if n := len(out); n > 0 && out[n-1].LastOffset+1 == from &&
			out[n-1].DeliveryCount == win.DeliveryCount && out[n-1].DeliveryState == win.DeliveryState {
			out[n-1].LastOffset = to
			continue
		}
		out = append(out, StateBatch{FirstOffset: from, LastOffset: to, DeliveryState: win.DeliveryState, DeliveryCount: win.DeliveryCount})
	}
	return out
}

// comparePriority orders batches as the combiner prefers them where they
// overlap: by delivery count, then by delivery state.
func comparePriority(a, b StateBatch) int {
	if c := cmp.Compare(a.DeliveryCount, b.DeliveryCount); c != 0 {
		return c
	}
	return cmp.Compare(a.DeliveryState, b.DeliveryState)
}
