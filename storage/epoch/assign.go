package epoch

// Assign records that epoch starts at startOffset (Kafka's assign). The
// log layer calls it when it appends the first batch of a new epoch, and a
// follower when it learns a new epoch.
//
// If the latest entry already has this epoch and starts at or before
// startOffset nothing changes and nothing is written (Kafka's
// isUpdateNeeded). Otherwise every entry that would break monotonicity (an
// epoch >= epoch, or a start offset >= startOffset) is removed before the new
// entry is appended (Kafka's maybeTruncateNonMonotonicEntries). An epoch or
// offset below zero is ErrInvalidEntry.
func (c *Cache) Assign(epoch int32, startOffset int64) error {
	e := Entry{Epoch: epoch, StartOffset: startOffset}
	if err := e.validate(); err != nil {
		return err
	}
	return c.mutate(func(cur []Entry) ([]Entry, bool) {
		return withAssigned(cur, e)
	})
}

// AssignDeferred is Assign without the checkpoint write: the entry is in
// the cache at once and reaches the file with the next Flush (or with any
// other change, which writes the whole cache). The log appends with it, so
// the first batch of a new leader epoch (every partition's first after a
// restart, when the controller has bumped every epoch) costs no fsyncs in
// the produce path, and flushes before its recovery point passes the
// entry's start offset; until then a crash loses the entry together with
// what recovery re-reads: recovery starts at the recovery point, at or
// below the entry's start offset, and assigns the epochs of the batches it
// finds again. Kafka writes the new epoch when a replica becomes leader
// (Partition.makeLeader's maybeAssignEpochStartOffset), with two fsyncs
// per partition on its metadata thread.
func (c *Cache) AssignDeferred(epoch int32, startOffset int64) error {
	e := Entry{Epoch: epoch, StartOffset: startOffset}
	if err := e.validate(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	next, changed := withAssigned(c.entries, e)
	if changed {
		c.publish(next)
		c.unwritten = true
	}
	return nil
}

// Flush writes the checkpoint if AssignDeferred changed the cache since it
// was last written. On an error the file is as before and a later Flush
// tries again.
func (c *Cache) Flush() error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if !c.unwritten {
		return nil
	}
	return c.write(c.entries)
}

// AssignAll assigns entries in order and writes the checkpoint once (Kafka's
// assign(List), used when rebuilding the cache from remote storage). All
// entries are validated first: on ErrInvalidEntry nothing changes, where
// Kafka would have applied the entries before the bad one in memory only.
func (c *Cache) AssignAll(entries []Entry) error {
	for _, e := range entries {
		if err := e.validate(); err != nil {
			return err
		}
	}
	return c.mutate(func(cur []Entry) ([]Entry, bool) {
		changed := false
		for _, e := range entries {
			var ch bool
			cur, ch = withAssigned(cur, e)
			changed = changed || ch
		}
		return cur, changed
	})
}

// withAssigned returns cur with e assigned, without modifying cur. Because
// both epochs and start offsets strictly increase, the entries that conflict
// with e form a suffix of cur.
func withAssigned(cur []Entry, e Entry) ([]Entry, bool) {
	if n := len(cur); n > 0 {
		last := cur[n-1]
		if last.Epoch == e.Epoch && e.StartOffset >= last.StartOffset {
			return cur, false
		}
	}
	keep := len(cur)
	for keep > 0 && (cur[keep-1].Epoch >= e.Epoch || cur[keep-1].StartOffset >= e.StartOffset) {
		keep--
	}
	next := make([]Entry, keep, keep+1)
	copy(next, cur[:keep])
	return append(next, e), true
}
