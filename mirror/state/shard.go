package state

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/record"
)

// shardState is where a shard is in its life.
type shardState int8

const (
	shardLoading shardState = iota // replaying the partition: COORDINATOR_LOAD_IN_PROGRESS
	shardActive                    // serving its records
	shardClosed                    // resigned, replaced or failed to load: NOT_COORDINATOR
)

// shard holds the records of one __mirror_state partition led by this
// broker (ClusterMirrorCoordinatorShard).
//
// Lock order: writeMu before mu. writeMu serializes everything that
// changes the records or the log (loads and writes) from validation to
// the map update; mu guards state and states and is never held across IO,
// so reads never wait for an append.
type shard struct {
	c         *Coordinator
	partition int32
	epoch     int32
	log       *slog.Logger

	ctx    context.Context // cancelled when the shard is unloaded
	cancel context.CancelFunc
	// prev is the shard this one replaced, closed; Run waits for its
	// writeMu before loading (see New).
	prev *shard

	writeMu sync.Mutex

	mu     sync.Mutex
	state  shardState
	states map[Key]partition.Record
}

// newShard returns the shard of partition p at leader epoch epoch,
// replacing prev (nil if none).
func newShard(c *Coordinator, p, epoch int32, prev *shard) *shard {
	ctx, cancel := context.WithCancel(context.Background())
	return &shard{
		c:         c,
		partition: p,
		epoch:     epoch,
		log:       c.log.With("partition", p, "epoch", epoch),
		ctx:       ctx,
		cancel:    cancel,
		prev:      prev,
		states:    map[Key]partition.Record{},
	}
}

// Epoch is the leader epoch the shard was loaded at (runtime.Shard).
func (s *shard) Epoch() int32 { return s.epoch }

// Run loads the partition; the shard then serves until it is unloaded
// (runtime.Shard).
func (s *shard) Run() {
	if prev := s.prev; prev != nil {
		prev.writeMu.Lock()
		prev.writeMu.Unlock() //nolint:staticcheck // an empty critical section: waiting out prev's write is the point
		s.prev = nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.loadLocked()
}

// loadLocked replays the log into a fresh map and makes the shard active,
// or closes it if the log cannot be read. Called with writeMu held and the
// shard loading (or about to be: see reloadLocked).
func (s *shard) loadLocked() {
	m, err := s.readLog(s.ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != shardLoading { // unloaded meanwhile
		return
	}
	if err != nil {
		s.log.Error("loading mirror states failed; not coordinating this partition", "err", err)
		s.state = shardClosed
		return
	}
	s.states = m
	s.state = shardActive
	s.log.Debug("loaded mirror states", "records", len(m))
}

// reloadLocked makes memory match the log again after a failed append,
// whose batch may or may not be in the log (a timed-out append can still
// commit): requests answer COORDINATOR_LOAD_IN_PROGRESS until the replay
// is done. Called with writeMu held.
func (s *shard) reloadLocked(cause error) {
	s.mu.Lock()
	if s.state != shardActive {
		s.mu.Unlock()
		return
	}
	s.state = shardLoading
	s.mu.Unlock()
	s.log.Warn("append to __mirror_state failed; reloading the partition so memory matches the log", "err", cause)
	s.loadLocked()
}

// Unload stops serving: requests answer NOT_COORDINATOR and a load or an
// append in progress is cancelled (runtime.Shard).
func (s *shard) Unload() {
	s.mu.Lock()
	s.state = shardClosed
	s.states = nil
	s.mu.Unlock()
	s.cancel()
}

// Closed reports whether the shard stopped serving: unloaded, replaced or
// failed to load (runtime.Shard).
func (s *shard) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == shardClosed
}

// stateCode is the error for requests to a shard that is not active.
// Called with mu held.
func (s *shard) stateCode() int16 {
	switch s.state {
	case shardActive:
		return 0
	case shardLoading:
		return codeLoadInProgress
	}
	return codeNotCoordinator
}

// readLog replays the partition's records up to its log end offset
// (CoordinatorLoaderImpl, runtime.Loader): the last record of a key wins,
// a tombstone deletes it. Transactional data batches are replayed like any
// other; control batches are skipped.
func (s *shard) readLog(ctx context.Context) (map[Key]partition.Record, error) {
	m := map[Key]partition.Record{}
	l := runtime.Loader{
		Log:           s.c.cfg.Log,
		Topic:         raftmeta.MirrorStateTopic,
		ReadBytes:     s.c.cfg.LoadBufferSize,
		MaxBatchBytes: maxDecompressedBatch,
	}
	if err := l.Load(ctx, s.partition, func(rec record.Record) error { return s.replayRecord(rec, m) }); err != nil {
		return nil, err
	}
	return m, nil
}

// replayRecord applies one record read while loading to m, skipping
// records of a key version this coordinator does not read.
func (s *shard) replayRecord(rec record.Record, m map[Key]partition.Record) error {
	k, err := decodeKey(rec.Key)
	if err != nil {
		if rec.KeyLen >= 2 && errors.Is(err, errUnknownKeyVersion) {
			s.log.Debug("skipping a record this coordinator does not read", "err", err)
			return nil
		}
		return err
	}
	if rec.ValueLen < 0 {
		delete(m, k)
		return nil
	}
	v, err := decodeValue(rec.Value)
	if err != nil {
		return err
	}
	m[k] = v
	return nil
}

// appendLocked appends recs as one batch and waits for it to be committed,
// bounded by mirror.coordinator.write.timeout.ms and by the shard's life.
// Called with writeMu held.
func (s *shard) appendLocked(ctx context.Context, recs []stateRecord) error {
	batch, err := buildBatch(recs, s.c.cfg.Clock.Now().UnixMilli())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.c.cfg.WriteTimeout)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	_, err = s.c.cfg.Log.Append(ctx, s.partition, batch)
	return err
}
