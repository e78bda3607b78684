package epoch

// TruncateFromEnd removes every entry whose start offset is >= endOffset,
// for when the log is truncated to endOffset (Kafka's
// truncateFromEndAsyncFlush, but flushed synchronously). A negative
// endOffset, or one above the latest start offset, changes nothing.
func (c *Cache) TruncateFromEnd(endOffset int64) error {
	return c.mutate(func(cur []Entry) ([]Entry, bool) {
		return truncatedFromEnd(cur, endOffset)
	})
}

// TruncateFromStart drops the epochs that end at or before startOffset, for
// when the log start offset moves up to startOffset (Kafka's
// truncateFromStartAsyncFlush, but flushed synchronously). Of the entries
// starting at or before startOffset only the latest survives, moved to start
// at startOffset, since the data before it is gone; so an entry starting
// exactly at startOffset is kept as it is.
func (c *Cache) TruncateFromStart(startOffset int64) error {
	return c.mutate(func(cur []Entry) ([]Entry, bool) {
		return truncatedFromStart(cur, startOffset)
	})
}

// Clear removes every entry and writes the empty checkpoint, for when the
// log is truncated fully (Kafka's clearAndFlush). Like Kafka it writes even
// when the cache is already empty, so the file is known to be empty.
func (c *Cache) Clear() error {
	return c.mutate(func([]Entry) ([]Entry, bool) { return nil, true })
}

// EntriesInRange returns the entries covering the offsets [startOffset,
// endOffset), as TruncateFromStart(startOffset) (skipped when startOffset is
// negative) and then TruncateFromEnd(endOffset) would leave them, without
// changing the cache (Kafka's epochEntriesInRange, used for tiered storage
// segment metadata).
func (c *Cache) EntriesInRange(startOffset, endOffset int64) []Entry {
	entries := c.snapshot()
	if startOffset >= 0 {
		entries, _ = truncatedFromStart(entries, startOffset)
	}
	entries, _ = truncatedFromEnd(entries, endOffset)
	return append([]Entry{}, entries...)
}

// truncatedFromEnd returns cur without its entries starting at or after
// endOffset, sharing cur's backing array (callers never modify it).
func truncatedFromEnd(cur []Entry, endOffset int64) ([]Entry, bool) {
	keep := len(cur)
	if endOffset < 0 {
		return cur, false
	}
	for keep > 0 && cur[keep-1].StartOffset >= endOffset {
		keep--
	}
	if keep == len(cur) {
		return cur, false
	}
	return cur[:keep:keep], true
}

// truncatedFromStart returns cur with the entries starting at or before
// startOffset replaced by the latest of them, moved to startOffset. It
// reports no change when that leaves cur as it was (the first entry already
// starts at startOffset): Kafka rewrites the file then too, to no effect.
func truncatedFromStart(cur []Entry, startOffset int64) ([]Entry, bool) {
	n := 0 // entries starting at or before startOffset form a prefix
	for n < len(cur) && cur[n].StartOffset <= startOffset {
		n++
	}
	if n == 0 || (n == 1 && cur[0].StartOffset == startOffset) {
		return cur, false
	}
	next := make([]Entry, 0, len(cur)-n+1)
	next = append(next, Entry{Epoch: cur[n-1].Epoch, StartOffset: startOffset})
	return append(next, cur[n:]...), true
}
