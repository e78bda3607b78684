package raftmeta

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// bootstrapKey holds, in a new metadata directory's stable store, the
// bootstrap records it was formatted with (EncodeBatch), as Kafka keeps
// them in the metadata directory's bootstrap.checkpoint.
var bootstrapKey = []byte("strait.bootstrap.records")

// ErrBootstrapExistingLog refuses bootstrap records for a metadata log that
// exists already: they describe a new cluster's first state, and Kafka's
// kafka-storage format likewise refuses a formatted directory.
var ErrBootstrapExistingLog = errors.New("bootstrap records are only written when a new cluster's metadata log is created")

// loadBootstrap keeps Config.BootstrapRecords in a new directory, refuses
// them for an existing one, and reads back the ones a new directory was
// given (a restart before the cluster's first write, with or without
// them again, still writes them once).
func (q *Quorum) loadBootstrap() error {
	stored, err := q.store.Get(bootstrapKey)
	if err != nil && !errors.Is(err, ErrKeyNotFound) {
		return err
	}
	if len(q.cfg.BootstrapRecords) > 0 {
		has, err := raft.HasExistingState(q.store, q.store, q.snaps)
		if err != nil {
			return fmt.Errorf("raftmeta: %w", err)
		}
		if has || stored != nil {
			return fmt.Errorf("raftmeta: the metadata log in %s exists already: %w (start the node without them and change credentials with AlterUserScramCredentials, e.g. kafka-configs --alter --entity-type users)", q.cfg.Dir, ErrBootstrapExistingLog)
		}
		// The FSM must not drop the batch (every write would wait on it):
		// check it applies to the empty image.
		if err := newBuilder(EmptyImage(), 1).replay(q.cfg.BootstrapRecords); err != nil {
			return fmt.Errorf("raftmeta: bootstrap records: %w", err)
		}
		stored = EncodeBatch(q.cfg.BootstrapRecords)
		if err := q.store.Set(bootstrapKey, stored); err != nil {
			return err
		}
	}
	if stored == nil {
		return nil
	}
	records, err := DecodeBatch(stored)
	if err != nil {
		return fmt.Errorf("raftmeta: the stored bootstrap records: %w", err)
	}
	q.cfg.BootstrapRecords = records
	return nil
}

// writeBootstrap appends Config.BootstrapRecords as the log's first batch
// when the image is still empty: the active controller of a new cluster
// writes them before any other write (QuorumController appends the
// bootstrap metadata when it activates over an empty log). Called by
// write, holding the write slot, after Sync: an image at offset 0 then
// means no batch was ever committed. Should a leader change lose the
// acknowledgement of a batch that did commit, the next leader writes it
// again, which replays to the same image (credentials are upserts).
func (c *Controller) writeBootstrap(ctx context.Context) error {
	if c.bootstrapped || len(c.cfg.BootstrapRecords) == 0 {
		return nil
	}
	if c.log.Image().Offset != 0 {
		c.bootstrapped = true
		return nil
	}
	select {
	case err := <-c.log.Propose(c.cfg.BootstrapRecords):
		if err != nil {
			return fmt.Errorf("raftmeta: writing the bootstrap records: %w", err)
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	c.bootstrapped = true
	c.logger.Info("wrote the bootstrap metadata of a new cluster", "records", len(c.cfg.BootstrapRecords))
	return nil
}
