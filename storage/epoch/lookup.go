package epoch

import "sort"

// Entries returns a copy of the entries, oldest epoch first (Kafka's
// epochEntries).
func (c *Cache) Entries() []Entry {
	return append([]Entry{}, c.snapshot()...)
}

// NonEmpty reports whether the cache holds any entry.
func (c *Cache) NonEmpty() bool { return len(c.snapshot()) > 0 }

// LatestEntry is the entry of the highest epoch.
func (c *Cache) LatestEntry() (Entry, bool) {
	entries := c.snapshot()
	if len(entries) == 0 {
		return Entry{}, false
	}
	return entries[len(entries)-1], true
}

// LatestEpoch is the highest epoch: the epoch of the current leader, the
// one the log is appending to.
func (c *Cache) LatestEpoch() (int32, bool) {
	e, ok := c.LatestEntry()
	return e.Epoch, ok
}

// EarliestEntry is the entry of the lowest epoch.
func (c *Cache) EarliestEntry() (Entry, bool) {
	entries := c.snapshot()
	if len(entries) == 0 {
		return Entry{}, false
	}
	return entries[0], true
}

// PreviousEpoch is the epoch before the latest one (Kafka's previousEpoch()).
func (c *Cache) PreviousEpoch() (int32, bool) {
	entries := c.snapshot()
	if len(entries) < 2 {
		return 0, false
	}
	return entries[len(entries)-2].Epoch, true
}

// PreviousEntry is the entry of the highest epoch below epoch (Kafka's
// previousEntry).
func (c *Cache) PreviousEntry(epoch int32) (Entry, bool) {
	entries := c.snapshot()
	i := sort.Search(len(entries), func(i int) bool { return entries[i].Epoch >= epoch })
	if i == 0 {
		return Entry{}, false
	}
	return entries[i-1], true
}

// PreviousEpochOf is the highest epoch below epoch (Kafka's
// previousEpoch(int)).
func (c *Cache) PreviousEpochOf(epoch int32) (int32, bool) {
	e, ok := c.PreviousEntry(epoch)
	return e.Epoch, ok
}

// NextEpoch is the lowest epoch above epoch (Kafka's nextEpoch).
func (c *Cache) NextEpoch(epoch int32) (int32, bool) {
	entries := c.snapshot()
	i := firstAbove(entries, epoch)
	if i == len(entries) {
		return 0, false
	}
	return entries[i].Epoch, true
}

// EpochEntry is the entry of exactly epoch (Kafka's epochEntry).
func (c *Cache) EpochEntry(epoch int32) (Entry, bool) {
	entries := c.snapshot()
	i := firstAbove(entries, epoch)
	if i == 0 || entries[i-1].Epoch != epoch {
		return Entry{}, false
	}
	return entries[i-1], true
}

// EpochForOffset is the epoch the batch at offset belongs to: that of the
// last entry starting at or before offset (Kafka's epochForOffset). Offsets
// before the earliest entry have no epoch.
func (c *Cache) EpochForOffset(offset int64) (int32, bool) {
	entries := c.snapshot()
	i := sort.Search(len(entries), func(i int) bool { return entries[i].StartOffset > offset })
	if i == 0 {
		return 0, false
	}
	return entries[i-1].Epoch, true
}

// EndOffsetFor answers OffsetsForLeaderEpoch (KIP-101, KIP-279; Kafka's
// endOffsetFor): the largest epoch <= requestedEpoch that the log knows, and
// the offset where that epoch ends, which is the start offset of the first
// higher epoch, or logEndOffset when requestedEpoch is the latest epoch.
//
//   - requestedEpoch is UndefinedEpoch, or above every known epoch (the cache
//     is empty, or the requester is ahead of us): UndefinedEpoch,
//     UndefinedOffset.
//   - requestedEpoch is the latest epoch: it, logEndOffset.
//   - requestedEpoch is below the earliest epoch: requestedEpoch itself and
//     the earliest start offset. Epochs in between may have been lost to
//     retention, but the follower must truncate to at least where our log
//     starts.
//   - otherwise: the highest epoch <= requestedEpoch (a follower asking for
//     an epoch it saw but we never did gets the one before it, KIP-279) and
//     the start offset of the first epoch above requestedEpoch.
func (c *Cache) EndOffsetFor(requestedEpoch int32, logEndOffset int64) (epoch int32, endOffset int64) {
	entries := c.snapshot()
	if requestedEpoch == UndefinedEpoch {
		return UndefinedEpoch, UndefinedOffset
	}
	if n := len(entries); n > 0 && entries[n-1].Epoch == requestedEpoch {
		return requestedEpoch, logEndOffset
	}
	higher := firstAbove(entries, requestedEpoch)
	if higher == len(entries) {
		return UndefinedEpoch, UndefinedOffset
	}
	if higher == 0 {
		return requestedEpoch, entries[0].StartOffset
	}
	return entries[higher-1].Epoch, entries[higher].StartOffset
}

// firstAbove is the index of the first entry whose epoch is above epoch, or
// len(entries).
func firstAbove(entries []Entry, epoch int32) int {
	return sort.Search(len(entries), func(i int) bool { return entries[i].Epoch > epoch })
}
