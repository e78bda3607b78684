package producer

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
)

// ControlInfo is what the Log decoded from a control batch's record: its
// type and, for COMMIT/ABORT markers, the coordinator epoch. It is the zero
// value for data batches.
type ControlInfo struct {
	Type             kmsg.ControlRecordKeyType
	CoordinatorEpoch int32
}

// Update stages the producer-state effects of one append: Append validates
// each batch in order against the manager's state plus the batches staged
// before it, and Commit applies them once the segment write succeeded. This
// is Kafka's two-phase prepareUpdate/ProducerAppendInfo → update/completeTxn
// (UnifiedLog.analyzeAndValidateProducerState and append): a rejected append
// leaves the manager untouched.
//
// Leaders (OriginClient, OriginCoordinator), followers (OriginReplication)
// and recovery replay all go through Update, so every replica derives the
// same state from the same log.
type Update struct {
	m      *Manager
	origin record.AppendOrigin

	// infos is the staged state per producer. It and expired are made on
	// first write: a batch without a producer id (most of them) stages
	// nothing, and a nil map reads as empty (issue 29's allocation profile
	// of a plain produce had them among each request's objects).
	infos map[int64]*appendInfo
	// expired lists producers dropped by a MIRROR_PID_RESET in this Update:
	// their committed entries are deleted at Commit, and later batches of
	// the Update start them from an empty entry.
	expired   map[int64]struct{}
	started   []TxnMetadata  // transactions begun, in offset order
	completed []CompletedTxn // transactions ended, in offset order
	markers   []markerOf     // the transaction markers appended
	// guard is the KIP-890 verification a client batch that begins a
	// transaction must hold (Verify); nil requires none.
	guard *VerificationGuard

	err  error // the first rejection; the Update is then dead
	done bool
}

// NewUpdate starts staging an append from origin.
func (m *Manager) NewUpdate(origin record.AppendOrigin) *Update {
	return &Update{m: m, origin: origin}
}

// Append validates b (which already carries its final offsets) and stages
// its effect. It returns the transaction b completes, if b is a COMMIT or
// ABORT marker of an open transaction. Errors are *record.Error with the
// Kafka code for the client; after one, the whole append must be rejected
// and the Update discarded.
//
// Batches without a producer id are ignored, except MIRROR_PID_RESET.
//
// MIRROR_PID_RESET (KIP-1279, control type 7) is the barrier a mirror writes
// when it stops, so local producers that reuse the source cluster's producer
// ids start clean instead of failing on the mirrored epochs and sequences.
// It expires every producer without an ongoing transaction: entries already
// committed and entries staged earlier in this Update alike, and batches
// after it in this Update see those producers as unknown. A producer with an
// ongoing transaction is kept, because its transaction still has to be
// closed by a marker; forgetting it would drop the transaction from the
// first unstable offset and let read_committed consumers see uncommitted
// data. The reset applies identically for every origin, which keeps leader,
// followers and recovery in agreement.
func (u *Update) Append(b record.Batch, ctrl ControlInfo) (*CompletedTxn, error) {
	if u.done {
		return nil, ErrUpdateDone
	}
	if u.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUpdateFailed, u.err)
	}
	c, err := u.append(b, ctrl)
	if err != nil {
		u.err = err
		return nil, err
	}
	return c, nil
}

func (u *Update) append(b record.Batch, ctrl ControlInfo) (*CompletedTxn, error) {
	if b.IsControl() {
		if b.RecordCount() == 0 {
			// The cleaner emptied the batch: the transaction it ended is
			// gone from the log, so there is nothing to apply.
			return nil, nil
		}
		if ctrl.Type == record.ControlMirrorPidReset {
			u.resetProducers()
			return nil, nil
		}
	}
	if !b.HasProducerID() {
		return nil, nil
	}
	pid := b.ProducerID()
	if !b.IsControl() {
		info := u.info(pid)
		if u.origin == record.OriginClient && b.IsTransactional() && !info.updated.HasOngoingTxn() {
			if err := u.checkVerification(pid, b.BaseOffset()); err != nil {
				return nil, err
			}
		}
		started, err := info.appendDataBatch(b)
		if err != nil {
			return nil, err
		}
		if started {
			u.started = append(u.started, TxnMetadata{ProducerID: pid, FirstOffset: b.BaseOffset(), LastOffset: -1})
		}
		return nil, nil
	}
	if ctrl.Type != kmsg.ControlRecordKeyTypeCommit && ctrl.Type != kmsg.ControlRecordKeyTypeAbort {
		return nil, record.Errorf(kerr.InvalidRecord,
			"control batch of producer %d at offset %d has type %d, not a transaction marker", pid, b.BaseOffset(), ctrl.Type)
	}
	c, err := u.info(pid).appendEndTxnMarker(b, ctrl)
	if err != nil {
		return nil, err
	}
	u.markers = append(u.markers, markerOf{pid, b.ProducerEpoch()})
	if c != nil {
		u.completed = append(u.completed, *c)
	}
	return c, nil
}

// info returns the staged state of pid, starting it from the committed
// entry (or an empty one) on first use.
func (u *Update) info(pid int64) *appendInfo {
	if a, ok := u.infos[pid]; ok {
		return a
	}
	var cur *Entry
	if _, gone := u.expired[pid]; !gone {
		cur = u.m.committedEntry(pid)
	}
	if cur == nil {
		e := emptyEntry(pid)
		cur = &e
	}
	a := newAppendInfo(pid, cur, u.origin)
	if u.infos == nil {
		u.infos = map[int64]*appendInfo{}
	}
	u.infos[pid] = a
	return a
}

// resetProducers applies MIRROR_PID_RESET to the staged view: see Append.
func (u *Update) resetProducers() {
	if u.expired == nil {
		u.expired = map[int64]struct{}{}
	}
	for pid, a := range u.infos {
		if !a.updated.HasOngoingTxn() {
			delete(u.infos, pid)
			u.expired[pid] = struct{}{}
		}
	}
	u.m.mu.Lock()
	defer u.m.mu.Unlock()
	for pid, e := range u.m.producers {
		if _, staged := u.infos[pid]; staged || e.HasOngoingTxn() {
			continue // a staged entry here has an ongoing transaction
		}
		u.expired[pid] = struct{}{}
	}
}

// Commit applies the Update after the batches were written: nextOffset is
// the offset after the last appended batch and becomes the map end offset
// (Kafka's updateMapEndOffset). For each completed transaction, in log
// order, it returns the last stable offset computed before that transaction
// is marked complete, as UnifiedLog.append does for the transaction index.
// Commit of a failed or already committed Update does nothing.
func (u *Update) Commit(nextOffset int64) []CommittedTxn {
	if u.done || u.err != nil {
		return nil
	}
	u.done = true
	m := u.m
	m.mu.Lock()
	defer m.mu.Unlock()
	for pid := range u.expired {
		delete(m.producers, pid)
	}
	for pid, a := range u.infos {
		if e, ok := m.producers[pid]; ok {
			e.mergeFrom(&a.updated)
		} else {
			e := a.updated
			m.producers[pid] = &e
		}
	}
	for _, t := range u.started {
		m.ongoing.put(t)
	}
	var out []CommittedTxn
	for _, c := range u.completed {
		out = append(out, CommittedTxn{Txn: c, LastStableOffset: m.lastStableOffsetLocked(c)})
		m.completeTxnLocked(c)
	}
	m.clearVerificationsLocked(u)
	m.lastMapOffset = nextOffset
	return out
}
