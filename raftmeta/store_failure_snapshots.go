package raftmeta

import (
	"fmt"
	"io"

	"github.com/hashicorp/raft"
)

// snapshotsOf gives raft its snapshot store with the raft log's failure
// rule (store_failure.go): raft's snapshots (<metadata dir>/snapshots)
// are in the metadata log directory too. Left to itself, hashicorp/raft
// logs a snapshot it failed to write and tries again later while the log
// grows, and a follower that cannot store or open the snapshot its leader
// sends it never catches up, so its broker would serve a metadata image
// that no longer changes. An IO error of the snapshot store is a failure
// of the store: heard once, and the goroutine that met it parks.
func snapshotsOf(inner raft.SnapshotStore, s *Store) raft.SnapshotStore {
	return haltingSnapshots{inner: inner, s: s}
}

type haltingSnapshots struct {
	inner raft.SnapshotStore
	s     *Store
}

func (h haltingSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := h.inner.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, h.s.fail(fmt.Errorf("raftmeta: create snapshot: %w", err))
	}
	return haltingSink{SnapshotSink: sink, s: h.s}, nil
}

func (h haltingSnapshots) List() ([]*raft.SnapshotMeta, error) {
	metas, err := h.inner.List()
	if err != nil {
		return nil, h.s.fail(fmt.Errorf("raftmeta: list snapshots: %w", err))
	}
	return metas, nil
}

func (h haltingSnapshots) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	meta, rc, err := h.inner.Open(id)
	if err != nil {
		return nil, nil, h.s.fail(fmt.Errorf("raftmeta: open snapshot %s: %w", id, err))
	}
	return meta, rc, nil
}

// haltingSink is a snapshot being written. Cancel (the FSM's own error,
// or a snapshot sent over a broken connection) is not a failure of the
// directory, so it is passed through.
type haltingSink struct {
	raft.SnapshotSink
	s *Store
}

func (h haltingSink) Write(p []byte) (int, error) {
	n, err := h.SnapshotSink.Write(p)
	if err != nil {
		return n, h.s.fail(fmt.Errorf("raftmeta: write snapshot %s: %w", h.ID(), err))
	}
	return n, nil
}

func (h haltingSink) Close() error {
	if err := h.SnapshotSink.Close(); err != nil {
		return h.s.fail(fmt.Errorf("raftmeta: close snapshot %s: %w", h.ID(), err))
	}
	return nil
}
