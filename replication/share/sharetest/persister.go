// Package sharetest has test doubles for replication/share's
// dependencies, for tests outside the package (the broker's integration
// tests) until the share coordinator is wired.
package sharetest

import (
	"context"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/replication/share"
)

// Persister is an in-memory share coordinator: it keeps the last state
// written for each share partition and fences writes from an older state
// epoch (FENCED_STATE_EPOCH) or leader epoch (FENCED_LEADER_EPOCH), as
// Kafka's ShareCoordinator does. Safe for concurrent use; one Persister
// shared by several brokers plays the one coordinator of a cluster.
type Persister struct {
	mu     sync.Mutex
	states map[share.PartitionKey]share.PersistedState
	writes int
}

// NewPersister returns an empty Persister: every share partition reads as
// uninitialized (start offset -1).
func NewPersister() *Persister {
	return &Persister{states: map[share.PartitionKey]share.PersistedState{}}
}

// Initialize stores an initial state (InitializeShareGroupState).
func (p *Persister) Initialize(_ context.Context, key share.PartitionKey, stateEpoch int32, startOffset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.states[key] = share.PersistedState{StateEpoch: stateEpoch, LeaderEpoch: -1, StartOffset: startOffset}
	return nil
}

// Read returns the stored state (ReadShareGroupState). A reader in an
// older leader epoch than the stored one is fenced; a newer one's epoch
// is stored, so the previous leader's late writes are fenced from then on
// (Kafka's ShareCoordinatorShard.readStateAndMaybeUpdateLeaderEpoch).
func (p *Persister) Read(_ context.Context, key share.PartitionKey, leaderEpoch int32) (share.PersistedState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.states[key]
	if !ok {
		st = share.PersistedState{StartOffset: -1, LeaderEpoch: -1}
	}
	if leaderEpoch < st.LeaderEpoch {
		return share.PersistedState{}, kerr.FencedLeaderEpoch
	}
	st.LeaderEpoch = leaderEpoch
	p.states[key] = st
	st.Batches = slices.Clone(st.Batches)
	return st, nil
}

// Write replaces the stored state (WriteShareGroupState).
func (p *Persister) Write(_ context.Context, key share.PartitionKey, st share.PersistedState) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.states[key]; ok {
		switch {
		case st.StateEpoch < cur.StateEpoch:
			return kerr.FencedStateEpoch
		case st.LeaderEpoch < cur.LeaderEpoch:
			return kerr.FencedLeaderEpoch
		}
	}
	st.Batches = slices.Clone(st.Batches)
	p.states[key] = st
	p.writes++
	return nil
}

// Delete forgets a share partition (DeleteShareGroupState).
func (p *Persister) Delete(_ context.Context, key share.PartitionKey) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.states, key)
	return nil
}

// State returns the stored state of key, false when there is none.
func (p *Persister) State(key share.PartitionKey) (share.PersistedState, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.states[key]
	st.Batches = slices.Clone(st.Batches)
	return st, ok
}

// Writes counts the successful writes.
func (p *Persister) Writes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writes
}

var _ share.Persister = (*Persister)(nil)
