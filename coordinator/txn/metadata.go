package txn

import (
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// State is a transactional id's state, with Kafka's numbering (the
// TransactionStatus of TransactionLogValue) and names (kmsg's String, which
// ListTransactions and DescribeTransactions report).
type State = kmsg.TransactionState

// The states of Kafka's TransactionState.
const (
	Empty             State = 0
	Ongoing           State = 1
	PrepareCommit     State = 2
	PrepareAbort      State = 3
	CompleteCommit    State = 4
	CompleteAbort     State = 5
	Dead              State = 6
	PrepareEpochFence State = 7
)

// validPrevious is each state's valid previous states
// (TransactionState.validPreviousStates).
var validPrevious = map[State][]State{
	Empty:         {Empty, CompleteCommit, CompleteAbort},
	Ongoing:       {Ongoing, Empty, CompleteCommit, CompleteAbort},
	PrepareCommit: {Ongoing},
	// KIP-890 part 2: a producer may abort with no transaction ongoing,
	// which bumps its epoch (TransactionCoordinator's empty abort).
	PrepareAbort:      {Ongoing, PrepareEpochFence, Empty, CompleteCommit, CompleteAbort},
	CompleteCommit:    {PrepareCommit},
	CompleteAbort:     {PrepareAbort},
	Dead:              {Empty, CompleteAbort, CompleteCommit},
	PrepareEpochFence: {Ongoing},
}

// validTransition reports whether a transactional id may move from one
// state to another.
func validTransition(from, to State) bool {
	return slices.Contains(validPrevious[to], from)
}

// Producer ids and epochs that say "none" (RecordBatch.NO_PRODUCER_ID and
// NO_PRODUCER_EPOCH).
const (
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
)

// The producer epochs that bound a producer id: lastProducerEpoch
// (Short.MaxValue - 1) is the last one handed to a producer, since an
// epoch bump must leave room for the fencing bump of an abort or the bump
// of a KIP-890 part 2 end, which may reach maxProducerEpoch.
const (
	lastProducerEpoch int16 = 1<<15 - 2
	maxProducerEpoch  int16 = 1<<15 - 1
)

// The client transaction versions a transaction records (Kafka's
// TransactionVersion): the classic protocol, and KIP-890 part 2's, whose
// partitions are added by their leaders and whose ends bump the epoch.
const (
	classicTransactionVersion int16 = 0
	transactionVersion2       int16 = 2
)

// epochExhausted reports whether a producer epoch can no longer be bumped
// (TransactionMetadata.isEpochExhausted).
func epochExhausted(epoch int16) bool { return epoch >= lastProducerEpoch }

// Metadata is one transactional id's state: Kafka's TransactionMetadata.
// The coordinator keeps one per id in memory, changed only through a
// Transit, in two steps as Kafka does: prepare* computes the next state
// and marks it pending, the coordinator appends it to __transaction_state,
// and once the append is acknowledged Complete makes it current (or
// Abandon drops it if the append failed). While a transition is pending
// the id answers CONCURRENT_TRANSACTIONS.
type Metadata struct {
	TransactionalID string
	ProducerID      int64
	// PrevProducerID and NextProducerID are KIP-890's (transaction
	// version 2 producer id rotation); -1 otherwise.
	PrevProducerID int64
	NextProducerID int64
	ProducerEpoch  int16
	// LastProducerEpoch is the epoch before the last bump, so a retried
	// InitProducerId whose answer was lost can be recognised (KIP-360).
	LastProducerEpoch int16
	TimeoutMs         int32
	State             State
	// Partitions are the partitions of the ongoing transaction.
	Partitions map[storage.TopicPartition]struct{}
	// StartMs and LastUpdateMs: Kafka's txnStartTimestamp (-1 when no
	// transaction ran) and txnLastUpdateTimestamp.
	StartMs      int64
	LastUpdateMs int64
	// ClientTransactionVersion is the transaction version the client uses
	// (0 or 1: the classic protocol; 2: KIP-890 part 2).
	ClientTransactionVersion int16

	// pending is the state of the transition being appended, if any.
	pending *State
	// failedEpochFence: an epoch fence whose append failed, so the next
	// fence does not bump the epoch again (hasFailedEpochFence).
	failedEpochFence bool
}

// Transit is a transition prepared on a Metadata: the state it would have
// once appended (TxnTransitMetadata).
type Transit struct {
	ProducerID               int64
	PrevProducerID           int64
	NextProducerID           int64
	ProducerEpoch            int16
	LastProducerEpoch        int16
	TimeoutMs                int32
	State                    State
	Partitions               map[storage.TopicPartition]struct{}
	StartMs                  int64
	LastUpdateMs             int64
	ClientTransactionVersion int16
}

// NewMetadata is a transactional id seen for the first time: a producer id
// with no epoch yet (InitProducerId bumps it to 0), Empty.
func NewMetadata(id string, producerID int64, timeoutMs int32, nowMs int64) *Metadata {
	return &Metadata{TransactionalID: id, ProducerID: producerID, PrevProducerID: NoProducerID, NextProducerID: NoProducerID,
		ProducerEpoch: NoProducerEpoch, LastProducerEpoch: NoProducerEpoch, TimeoutMs: timeoutMs, State: Empty,
		Partitions: map[storage.TopicPartition]struct{}{}, StartMs: -1, LastUpdateMs: nowMs}
}

// Pending is the state of the transition being appended, and whether there
// is one (pendingTransitionInProgress).
func (m *Metadata) Pending() (State, bool) {
	if m.pending == nil {
		return 0, false
	}
	return *m.pending, true
}

// EpochExhausted reports whether the producer epoch can no longer be
// bumped: the next InitProducerId rotates the producer id.
func (m *Metadata) EpochExhausted() bool { return epochExhausted(m.ProducerEpoch) }

// HasPartition reports whether tp is in the ongoing transaction.
func (m *Metadata) HasPartition(tp storage.TopicPartition) bool {
	_, ok := m.Partitions[tp]
	return ok
}

// transit is the current state as a Transit (prepareNoTransit).
func (m *Metadata) transit() Transit {
	return Transit{ProducerID: m.ProducerID, PrevProducerID: m.PrevProducerID, NextProducerID: m.NextProducerID,
		ProducerEpoch: m.ProducerEpoch, LastProducerEpoch: m.LastProducerEpoch, TimeoutMs: m.TimeoutMs, State: m.State,
		Partitions: maps.Clone(m.Partitions), StartMs: m.StartMs, LastUpdateMs: m.LastUpdateMs,
		ClientTransactionVersion: m.ClientTransactionVersion}
}

// prepare marks t pending after checking it is a valid transition
// (prepareTransitionTo). Callers check Pending first: preparing over a
// pending transition is a coordinator bug.
func (m *Metadata) prepare(t Transit) (Transit, error) {
	switch {
	case m.pending != nil:
		return Transit{}, fmt.Errorf("txn %s: preparing %s while %s is pending", m.TransactionalID, t.State, *m.pending)
	case t.ProducerID < 0:
		return Transit{}, fmt.Errorf("txn %s: preparing %s with producer id %d", m.TransactionalID, t.State, t.ProducerID)
	case t.State != Dead && t.ProducerEpoch < 0:
		return Transit{}, fmt.Errorf("txn %s: preparing %s with producer epoch %d", m.TransactionalID, t.State, t.ProducerEpoch)
	case !validTransition(m.State, t.State):
		return Transit{}, fmt.Errorf("txn %s: invalid transition from %s to %s", m.TransactionalID, m.State, t.State)
	}
	s := t.State
	m.pending = &s
	return t, nil
}

// PrepareFenceEpoch fences the producer of an ongoing transaction that is
// to be aborted by the coordinator (an InitProducerId for the id, or the
// transaction timed out): the epoch is bumped, unless an earlier fence's
// append failed and bumped it already (prepareFenceProducerEpoch).
func (m *Metadata) PrepareFenceEpoch() (Transit, error) {
	if m.ProducerEpoch == maxProducerEpoch {
		return Transit{}, fmt.Errorf("txn %s: cannot fence producer epoch %d", m.TransactionalID, m.ProducerEpoch)
	}
	t := m.transit()
	t.State = PrepareEpochFence
	t.LastProducerEpoch = NoProducerEpoch
	if !m.failedEpochFence {
		t.ProducerEpoch++
	}
	return m.prepare(t)
}

// PrepareIncrementEpoch is InitProducerId's epoch bump
// (prepareIncrementProducerEpoch). expectedEpoch is the producer's current
// epoch when it sent one (KIP-360), else -1; PRODUCER_FENCED when it is
// neither the current epoch nor, for a retry whose answer was lost, the
// epoch before the last bump.
func (m *Metadata) PrepareIncrementEpoch(timeoutMs int32, expectedEpoch int16, nowMs int64) (Transit, *kerr.Error, error) {
	if epochExhausted(m.ProducerEpoch) {
		return Transit{}, nil, fmt.Errorf("txn %s: producer epoch %d is exhausted", m.TransactionalID, m.ProducerEpoch)
	}
	next, last := m.ProducerEpoch+1, NoProducerEpoch
	switch {
	case expectedEpoch < 0:
	case m.ProducerEpoch == NoProducerEpoch || expectedEpoch == m.ProducerEpoch:
		last = m.ProducerEpoch
	case expectedEpoch == m.LastProducerEpoch:
		// A retry of a bump whose answer was lost: answer the same.
		next, last = m.ProducerEpoch, m.LastProducerEpoch
	default:
		return Transit{}, kerr.ProducerFenced, nil
	}
	t := m.transit()
	t.State, t.ProducerEpoch, t.LastProducerEpoch, t.TimeoutMs = Empty, next, last, timeoutMs
	t.Partitions, t.StartMs, t.LastUpdateMs = map[storage.TopicPartition]struct{}{}, -1, nowMs
	t, err := m.prepare(t)
	return t, nil, err
}

// PrepareRotateProducerID gives the id a new producer id at epoch 0, once
// the epochs of the old one are exhausted (prepareProducerIdRotation).
// keepLastEpoch records the old epoch, so the producer's retry is
// recognised.
func (m *Metadata) PrepareRotateProducerID(newID int64, timeoutMs int32, nowMs int64, keepLastEpoch bool) (Transit, error) {
	t := m.transit()
	t.State, t.ProducerID, t.ProducerEpoch, t.LastProducerEpoch, t.TimeoutMs = Empty, newID, 0, NoProducerEpoch, timeoutMs
	if keepLastEpoch {
		t.LastProducerEpoch = m.ProducerEpoch
	}
	t.PrevProducerID = m.ProducerID
	t.Partitions, t.StartMs, t.LastUpdateMs = map[storage.TopicPartition]struct{}{}, -1, nowMs
	return m.prepare(t)
}

// PrepareAddPartitions adds partitions to the transaction, starting it
// when none is ongoing (prepareAddPartitions). tv is the client's
// transaction version: 2 when a partition leader or the group coordinator
// adds them for the producer (KIP-890 part 2), which makes the
// transaction's end bump the epoch.
func (m *Metadata) PrepareAddPartitions(add []storage.TopicPartition, tv int16, nowMs int64) (Transit, error) {
	t := m.transit()
	switch m.State {
	case Empty, CompleteCommit, CompleteAbort:
		t.StartMs = nowMs
	}
	t.State, t.LastUpdateMs, t.ClientTransactionVersion = Ongoing, nowMs, tv
	for _, tp := range add {
		t.Partitions[tp] = struct{}{}
	}
	return m.prepare(t)
}

// PrepareEnd moves an ongoing transaction to PrepareCommit or PrepareAbort
// for the producer's EndTxn (prepareAbortOrCommit, which takes the
// client's transaction version from the request). In the classic protocol
// (EndTxn v0-4) the epoch stays; with bump (EndTxn v5, KIP-890 part 2) it
// is bumped, so the markers carry an epoch no write of the ended
// transaction has and fence its late retries, and the producer starts the
// next transaction at the new epoch. The transaction records which it was,
// so a retry of the end is recognised by the epoch it had. Once the epochs
// are exhausted the completion moves the id to nextProducerID, taken
// beforehand (-1 otherwise). An abort with no transaction ongoing (bump
// only) has no partitions and starts now.
func (m *Metadata) PrepareEnd(commit, bump bool, nextProducerID int64, nowMs int64) (Transit, error) {
	t := m.transit()
	t.State, t.LastUpdateMs = PrepareAbort, nowMs
	if commit {
		t.State = PrepareCommit
	}
	t.ClientTransactionVersion = classicTransactionVersion
	if bump {
		if m.ProducerEpoch == maxProducerEpoch {
			return Transit{}, fmt.Errorf("txn %s: cannot bump producer epoch %d", m.TransactionalID, m.ProducerEpoch)
		}
		t.ProducerEpoch, t.LastProducerEpoch, t.NextProducerID = m.ProducerEpoch+1, m.ProducerEpoch, nextProducerID
		t.ClientTransactionVersion = transactionVersion2
		if m.State != Ongoing {
			t.StartMs = nowMs
		}
	}
	return m.prepare(t)
}

// AnswerAfterEnd is the producer id and epoch an EndTxn v5 answers once
// the end is prepared or complete (producerAfterEnd).
func (m *Metadata) AnswerAfterEnd() (int64, int16) {
	return producerAfterEnd(m.State, m.ProducerID, m.NextProducerID, m.ProducerEpoch)
}

// producerAfterEnd is the producer id and epoch a producer goes on with
// after an end, in state: the id's own, or, while an end that ran out of
// epochs is prepared, the next producer id at epoch 0.
func producerAfterEnd(state State, pid, nextPID int64, epoch int16) (int64, int16) {
	if (state == PrepareCommit || state == PrepareAbort) && nextPID >= 0 {
		return nextPID, 0
	}
	return pid, epoch
}

// PrepareFencedAbort aborts the ongoing transaction of a producer the
// coordinator fenced (PrepareFenceEpoch, then ClearPendingFence): at the
// fenced epoch, which is not bumped again, keeping the transaction's
// client transaction version.
func (m *Metadata) PrepareFencedAbort(nowMs int64) (Transit, error) {
	t := m.transit()
	t.State, t.LastUpdateMs = PrepareAbort, nowMs
	return m.prepare(t)
}

// PrepareComplete completes a prepared commit or abort once every marker
// is written: the transaction's partitions are cleared (prepareComplete).
func (m *Metadata) PrepareComplete(nowMs int64) (Transit, error) {
	t := m.transit()
	switch m.State {
	case PrepareCommit:
		t.State = CompleteCommit
	case PrepareAbort:
		t.State = CompleteAbort
	default:
		return Transit{}, fmt.Errorf("txn %s: completing from %s", m.TransactionalID, m.State)
	}
	m.failedEpochFence = false
	if m.NextProducerID >= 0 {
		// The epochs ran out at this end (KIP-890 part 2): the id moves
		// to the producer id taken for it, at epoch 0. LastProducerEpoch
		// stays the one the producer last had, so its InitProducerId
		// retry is recognised.
		t.ProducerID, t.PrevProducerID, t.ProducerEpoch = m.NextProducerID, m.ProducerID, 0
	}
	t.NextProducerID = NoProducerID
	t.Partitions, t.LastUpdateMs = map[storage.TopicPartition]struct{}{}, nowMs
	return m.prepare(t)
}

// PrepareDead removes an expired transactional id (prepareDead): its
// tombstone is appended.
func (m *Metadata) PrepareDead() (Transit, error) {
	t := m.transit()
	t.State, t.Partitions = Dead, map[storage.TopicPartition]struct{}{}
	return m.prepare(t)
}

// ClearPendingFence drops a pending epoch fence so the abort it leads to
// can be prepared with the fenced epoch (TransactionCoordinator.endTransaction
// clears a pending PrepareEpochFence before PrepareAbort).
func (m *Metadata) ClearPendingFence(fencedEpoch int16) {
	if m.pending != nil && *m.pending == PrepareEpochFence {
		m.pending = nil
		m.ProducerEpoch, m.LastProducerEpoch = fencedEpoch, NoProducerEpoch
	}
}

// MarkFailedFence records that an epoch fence's append failed: the epoch
// in memory is already the fenced one (hasFailedEpochFence).
func (m *Metadata) MarkFailedFence() { m.failedEpochFence = true }

// Abandon drops the pending transition: its append failed.
func (m *Metadata) Abandon() { m.pending = nil }

// Complete makes a pending transition current once its append was
// acknowledged (completeTransitionTo), after checking it is the one
// pending and consistent with the current state.
func (m *Metadata) Complete(t Transit) error {
	if m.pending == nil || *m.pending != t.State {
		return fmt.Errorf("txn %s: completing %s, pending %v", m.TransactionalID, t.State, m.pending)
	}
	if t.LastUpdateMs < m.LastUpdateMs {
		return fmt.Errorf("txn %s: completing %s with update time %d before %d", m.TransactionalID, t.State, t.LastUpdateMs, m.LastUpdateMs)
	}
	switch t.State {
	case Ongoing:
		for tp := range m.Partitions {
			if _, ok := t.Partitions[tp]; !ok && m.State == Ongoing {
				return fmt.Errorf("txn %s: completing Ongoing would drop partition %s", m.TransactionalID, tp)
			}
		}
		if t.ProducerID != m.ProducerID || t.ProducerEpoch != m.ProducerEpoch {
			return fmt.Errorf("txn %s: completing Ongoing changes producer %d/%d to %d/%d", m.TransactionalID,
				m.ProducerID, m.ProducerEpoch, t.ProducerID, t.ProducerEpoch)
		}
	case PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort:
		if t.ProducerID != m.ProducerID && t.ProducerID != m.NextProducerID {
			return fmt.Errorf("txn %s: completing %s changes producer id %d to %d", m.TransactionalID, t.State, m.ProducerID, t.ProducerID)
		}
	}
	m.ProducerID, m.PrevProducerID, m.NextProducerID = t.ProducerID, t.PrevProducerID, t.NextProducerID
	m.ProducerEpoch, m.LastProducerEpoch, m.TimeoutMs = t.ProducerEpoch, t.LastProducerEpoch, t.TimeoutMs
	m.State, m.Partitions, m.StartMs, m.LastUpdateMs = t.State, maps.Clone(t.Partitions), t.StartMs, t.LastUpdateMs
	m.ClientTransactionVersion = t.ClientTransactionVersion
	m.pending = nil
	return nil
}
