package share

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/storage/record"
)

// shardState is where a shard is in its life.
type shardState int8

const (
	shardLoading shardState = iota // replaying the partition (or about to, after a failed append): COORDINATOR_LOAD_IN_PROGRESS
	shardActive                    // serving its share-partitions
	shardClosed                    // resigned, replaced or failed to load: NOT_COORDINATOR
)

// maxDecompressedBatch bounds what a compressed batch of __share_group_state
// may decompress to while loading.
const maxDecompressedBatch = 64 << 20

// shard is the state of the share-partitions of one __share_group_state
// partition this broker leads (Kafka's ShareCoordinatorShard). Requests
// decide under mu what to write, apply it to memory at once and queue it
// for the writer, which appends it with acks=all; the answer waits for
// the append. A failed append leaves memory ahead of the log: the shard
// then answers COORDINATOR_LOAD_IN_PROGRESS and is replaced by a fresh
// load of the partition (writeDiverged), as the group coordinator does.
type shard struct {
	c         *Coordinator
	partition int32
	epoch     int32
	log       *slog.Logger

	ctx    context.Context // cancelled when the shard is unloaded
	cancel context.CancelFunc
	// writer appends the records queued under mu, which guards its queue.
	writer *runtime.Writer

	mu     sync.Mutex
	state  shardState
	states states
	// pruning knows where each share-partition's latest committed snapshot
	// is, and so what the partition no longer needs (prune.go).
	pruning pruneTracker
}

func newShard(c *Coordinator, partition, epoch int32) *shard {
	ctx, cancel := context.WithCancel(c.ctx)
	s := &shard{
		c:         c,
		partition: partition,
		epoch:     epoch,
		log:       c.log.With("partition", partition, "epoch", epoch),
		ctx:       ctx,
		cancel:    cancel,
		states:    states{},
		pruning:   newPruneTracker(),
	}
	s.writer = runtime.NewWriter(runtime.WriterConfig{
		Log:          c.cfg.Log,
		Partition:    partition,
		Lock:         &s.mu,
		Clock:        c.cfg.Clock,
		Serving:      s.writerServing,
		Diverged:     s.writeDiverged,
		WriteTimeout: c.cfg.WriteTimeout,
	})
	return s
}

// Epoch is the leader epoch the shard was loaded at (runtime.Shard).
func (s *shard) Epoch() int32 { return s.epoch }

// Closed reports whether the shard stopped serving (runtime.Shard).
func (s *shard) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == shardClosed
}

// Run loads the partition and then serves it until the shard is unloaded
// (runtime.Shard).
func (s *shard) Run() {
	m, pruning, err := s.load()
	s.mu.Lock()
	if s.state != shardLoading { // unloaded while loading
		s.mu.Unlock()
		return
	}
	if err != nil {
		s.log.Error("loading share-partition state failed; not coordinating this partition", "err", err)
		s.state = shardClosed
		s.mu.Unlock()
		return
	}
	s.states, s.pruning, s.state = m, pruning, shardActive
	n := len(m)
	s.mu.Unlock()
	s.log.Info("loaded share-partition state", "sharePartitions", n)
	s.writer.Run(s.ctx)
}

// load replays the partition from its log start to its log end
// (CoordinatorLoaderImpl, runtime.Loader): snapshots replace a
// share-partition's state, updates change it, tombstones remove it.
func (s *shard) load() (states, pruneTracker, error) {
	m, pruning := states{}, newPruneTracker()
	l := runtime.Loader{
		Log:           s.c.cfg.Log,
		Topic:         Topic,
		ReadBytes:     s.c.cfg.LoadBufferSize,
		MaxBatchBytes: maxDecompressedBatch,
	}
	err := l.Replay(s.ctx, s.partition, runtime.Playback{
		Record: func(_ runtime.BatchContext, offset int64, rec record.Record) error {
			r, err := decodeRecord(rec)
			if errors.Is(err, errUnknownRecord) {
				s.log.Warn("skipping a record this coordinator does not read", "offset", offset, "err", err)
				return nil
			}
			if err != nil {
				return err
			}
			r.replay(m)
			pruning.committed(r, offset)
			return nil
		},
	})
	return m, pruning, err
}

// Unload stops serving: requests answer NOT_COORDINATOR, queued writes
// fail, and the writer stops (runtime.Shard).
func (s *shard) Unload() {
	s.mu.Lock()
	s.state = shardClosed
	s.writer.FailQueued(runtime.ErrUnloaded)
	s.mu.Unlock()
	s.cancel()
}

// errorCode is the error for requests to a shard that is not active, 0
// if it is. Called with mu held.
func (s *shard) errorCode() int16 {
	switch s.state {
	case shardActive:
		return 0
	case shardLoading:
		return kerr.CoordinatorLoadInProgress.Code
	}
	return kerr.NotCoordinator.Code
}

// writerServing lets the writer write while the shard is active. Called
// with mu held.
func (s *shard) writerServing() error {
	if s.state != shardActive {
		// What was decided on memory being discarded is not written.
		return kerr.CoordinatorLoadInProgress
	}
	return nil
}

// writeDiverged handles a failed append: memory holds records the log may
// not, so the shard stops answering from it and the partition is loaded
// again. Called with mu held, before the writes' done callbacks.
func (s *shard) writeDiverged(err error) {
	s.state = shardLoading
	s.log.Warn("append to the share-group state partition failed; reloading the partition so memory matches the log", "err", err)
	go s.c.shards.Reload(s.partition, s)
}

// commitLocked applies recs to memory and queues them for the log; the
// returned channel gets the append's outcome. With no records it waits
// for the writes queued before it, so an answer never reports what is not
// yet in the log. Called with mu held.
func (s *shard) commitLocked(recs []shareRecord) <-chan error {
	encoded := make([]runtime.Record, len(recs))
	for i, r := range recs {
		r.replay(s.states)
		encoded[i] = r.encode()
	}
	done := make(chan error, 1)
	s.writer.AppendAt(encoded, len(recs) > 0, func(first int64, err error) {
		if err == nil && first >= 0 {
			for i, r := range recs {
				s.pruning.committed(r, first+int64(i))
			}
		}
		done <- err
	})
	return done
}
