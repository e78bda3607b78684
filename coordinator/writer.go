package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/coordinator/runtime"
)

// newShardWriter returns the shard's writer (runtime.Writer): its records
// go to the shard's __consumer_offsets partition, queued under mu.
func newShardWriter(s *shard) *runtime.Writer {
	return runtime.NewWriter(runtime.WriterConfig{
		Log:       s.c.cfg.Log,
		Partition: s.partition,
		Lock:      &s.mu,
		Clock:     s.c.cfg.Clock,
		Serving:   s.writerServing,
		Diverged:  s.writeDiverged,
	})
}

// writerServing lets the writer write while the shard is active. Called
// with mu held.
func (s *shard) writerServing() error {
	if s.state != shardActive {
		// A failed append made the shard reload: what was decided on the
		// memory being discarded is not written.
		return kerr.CoordinatorLoadInProgress
	}
	return nil
}

// writeDiverged handles a failed append of eager records (offset commits
// and tombstones, group deletions, whose effect is already in memory).
// Called with mu held, before the writes' done callbacks.
func (s *shard) writeDiverged(err error) {
	// Memory is ahead of the log until the reload: answer
	// COORDINATOR_LOAD_IN_PROGRESS from now on, so nobody reads what was
	// not written.
	s.state = shardLoading
	s.log.Warn("append to the offsets partition failed; reloading the partition so memory matches the log", "err", err)
	go s.c.reload(s)
}

// append queues records for the log. It is called with mu held, so the
// log receives records in the order the shard decided on them. eager marks
// records whose effect is already in memory: if their append fails, the
// shard reloads. done, if set, runs with mu held once the append is
// acknowledged (err nil) or failed.
func (s *shard) append(recs []coordRecord, eager bool, done func(err error)) {
	s.writer.Append(runtimeRecords(recs), eager, done)
}

// appendAndWait queues records and returns a channel that receives the
// append's outcome. Called with mu held; the caller waits after unlocking.
func (s *shard) appendAndWait(recs []coordRecord, eager bool) <-chan error {
	return s.writer.AppendAndWait(runtimeRecords(recs), eager)
}

// awaitAppend waits for the outcome of an append queued by
// appendAndWait, or until ctx is done.
func awaitAppend(ctx context.Context, done <-chan error) error {
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func runtimeRecords(recs []coordRecord) []runtime.Record {
	out := make([]runtime.Record, len(recs))
	for i, r := range recs {
		out[i] = runtime.Record{Key: r.key, Value: r.value}
	}
	return out
}
