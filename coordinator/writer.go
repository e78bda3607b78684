package coordinator

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// maxCoalescedBytes bounds how many bytes of queued records the writer puts
// in one batch; a single larger write still goes out alone.
const maxCoalescedBytes = 512 << 10

// pendingWrite is records queued for the partition. done, if set, runs
// with the shard mutex held once the append is acknowledged (err nil) or
// failed.
type pendingWrite struct {
	records []coordRecord
	size    int
	// eager marks records whose effect is already in memory (offset
	// commits and tombstones, group deletions): if their append fails,
	// memory is ahead of the log and the shard must reload.
	eager bool
	done  func(err error)
}

// append queues records for the log. It is called with mu held, so the
// log receives records in the order the shard decided on them.
func (s *shard) append(recs []coordRecord, eager bool, done func(err error)) {
	size := 0
	for _, r := range recs {
		size += len(r.key) + len(r.value) + 16
	}
	s.queue = append(s.queue, &pendingWrite{records: recs, size: size, eager: eager, done: done})
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// appendAndWait queues records and returns a channel that receives the
// append's outcome. Called with mu held; the caller waits after unlocking.
func (s *shard) appendAndWait(recs []coordRecord, eager bool) <-chan error {
	ch := make(chan error, 1)
	s.append(recs, eager, func(err error) { ch <- err })
	return ch
}

// runWriter appends queued records, coalescing what queued up during the
// previous append into one batch (the coordinator runtime's write batching).
func (s *shard) runWriter(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		for ctx.Err() == nil {
			s.mu.Lock()
			if s.state != shardActive {
				// A failed append made the shard reload: what was decided
				// on the memory being discarded is not written.
				s.failQueued(kerr.CoordinatorLoadInProgress)
			}
			batch := s.takeQueued()
			s.writing = len(batch) > 0
			s.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			err := s.write(ctx, batch)
			s.mu.Lock()
			reload := false
			for _, w := range batch {
				reload = reload || (err != nil && w.eager)
			}
			if reload = reload && s.state == shardActive; reload {
				// Memory is ahead of the log until the reload: answer
				// COORDINATOR_LOAD_IN_PROGRESS from now on, so nobody
				// reads what was not written.
				s.state = shardLoading
			}
			for _, w := range batch {
				if w.done != nil {
					w.done(err)
				}
			}
			s.writing = false
			s.mu.Unlock()
			if reload {
				s.log.Warn("append to the offsets partition failed; reloading the partition so memory matches the log", "err", err)
				go s.c.reload(s)
			}
		}
	}
}

// failQueued fails every queued write. Called with mu held.
func (s *shard) failQueued(err error) {
	queued := s.queue
	s.queue = nil
	for _, w := range queued {
		if w.done != nil {
			w.done(err)
		}
	}
}

// takeQueued removes the writes for the next batch from the queue.
func (s *shard) takeQueued() []*pendingWrite {
	n, size := 0, 0
	for n < len(s.queue) && (n == 0 || size+s.queue[n].size <= maxCoalescedBytes) {
		size += s.queue[n].size
		n++
	}
	batch := s.queue[:n:n]
	s.queue = s.queue[n:]
	return batch
}

// write appends one batch holding every record of writes.
func (s *shard) write(ctx context.Context, writes []*pendingWrite) error {
	var recs []coordRecord
	for _, w := range writes {
		recs = append(recs, w.records...)
	}
	b, err := buildBatch(recs, s.nowMs())
	if err != nil {
		return err
	}
	if _, err := s.c.cfg.Log.Append(ctx, s.partition, b); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return errShardUnloaded
		}
		return err
	}
	return nil
}
