package partition

import (
	"fmt"
	"time"
)

// Step feeds one input observed at now. It returns ErrStale when the event
// is ignored as stale or duplicate and ErrInvalidEvent when it is malformed;
// either way the machine is unchanged.
func (m *Machine) Step(now time.Time, ev Event) error {
	m.now = now
	var err error
	switch ev := ev.(type) {
	case BecomeLeader:
		err = m.becomeLeader(ev)
	case BecomeFollower:
		err = m.becomeFollower(ev)
	case DesiredChanged:
		err = m.desiredChanged(ev)
	case Result:
		err = m.result(ev)
	case FetchFailed:
		err = m.fetchFailed(ev)
	case SourceEpochAhead:
		err = m.sourceEpochAhead(ev)
	default:
		return fmt.Errorf("%w: %T", ErrInvalidEvent, ev)
	}
	if err != nil {
		return err
	}
	m.replan()
	return nil
}

// newGeneration forgets everything tied to the previous leadership and
// takes the new one. A fetcher that may still run is removed without
// waiting for an answer; the driver must perform a RemoveFetcher whatever
// its epoch (removing is always safe), and a new leadership removes it
// again, with a reply, before it relies on the log end.
func (m *Machine) newGeneration(leader bool, epoch int32) {
	m.leader, m.leaderEpoch = leader, epoch
	if m.fetcher.active {
		m.emit(Effect{Kind: RemoveFetcher}, false)
	}
	m.known = false
	m.access = AccessUnknown
	m.fetcher = fetcherState{}
	m.logPos = logPos{}
	m.epochWanted = 0
	m.failure = nil
	m.prog = progress{}
	m.stepFailures = 0
	m.await = nil
	m.gated = nil
}

func (m *Machine) becomeLeader(ev BecomeLeader) error {
	if ev.LeaderEpoch <= m.leaderEpoch {
		// Older news, a duplicate, or a claim to an epoch this replica
		// already saw another leader hold.
		return fmt.Errorf("%w: leader at epoch %d, machine at epoch %d", ErrStale, ev.LeaderEpoch, m.leaderEpoch)
	}
	m.newGeneration(true, ev.LeaderEpoch)
	return nil
}

func (m *Machine) becomeFollower(ev BecomeFollower) error {
	if ev.LeaderEpoch < m.leaderEpoch || (ev.LeaderEpoch == m.leaderEpoch && !m.leader) {
		return fmt.Errorf("%w: follower at epoch %d, machine at epoch %d", ErrStale, ev.LeaderEpoch, m.leaderEpoch)
	}
	m.newGeneration(false, ev.LeaderEpoch)
	return nil
}

func (m *Machine) desiredChanged(ev DesiredChanged) error {
	switch ev.Desired {
	case DesiredNone, DesiredStart, DesiredStop, DesiredPause:
	default:
		return fmt.Errorf("%w: desired %d", ErrInvalidEvent, ev.Desired)
	}
	m.mirror, m.desired = ev.Mirror, ev.Desired
	return nil
}

func (m *Machine) fetchFailed(ev FetchFailed) error {
	if !m.leader || !m.fetcher.active || ev.Ref != m.fetcher.ref {
		return fmt.Errorf("%w: fetch error from fetcher %s", ErrStale, ev.Ref)
	}
	msg := ev.Kind.String()
	if ev.Err != nil {
		msg += ": " + ev.Err.Error()
	}
	m.lastErr = msg
	if ev.Kind == FetchRetriable {
		return nil
	}
	if !m.fetcher.started {
		// The report overtook AddFetcher's answer: it did start, just now.
		m.fetcher.started, m.fetcher.startedAt = true, m.now
	}
	m.fail(msg, ev.Kind == FetchSourceTopicIDChanged)
	return nil
}

func (m *Machine) sourceEpochAhead(ev SourceEpochAhead) error {
	if !m.leader || !m.fetcher.active || ev.Ref != m.fetcher.ref {
		return fmt.Errorf("%w: epoch report from fetcher %s", ErrStale, ev.Ref)
	}
	m.epochWanted = max(m.epochWanted, ev.Epoch)
	return nil
}

// fail records a failure for the FAILED transition; it only matters in
// PREPARING and MIRRORING (target ignores it elsewhere). The attempt count
// continues the record's unless the fetcher had been running for
// RetryResetAfter.
func (m *Machine) fail(msg string, nonRetryable bool) {
	if m.rec.State != StatePreparing && m.rec.State != StateMirroring {
		return
	}
	attempt := max(m.rec.RetryAttempt, 0) + 1
	if m.fetcher.started && m.now.Sub(m.fetcher.startedAt) >= m.cfg.RetryResetAfter {
		attempt = 1
	}
	if nonRetryable {
		attempt = -1
	}
	m.failure = &failure{msg: msg, nonRetryable: nonRetryable, attempt: attempt}
}

func (m *Machine) result(r Result) error {
	if !m.leader || m.await == nil || r.Ref != m.await.Ref {
		return fmt.Errorf("%w: result for %s", ErrStale, r.Ref)
	}
	eff := *m.await
	m.await = nil
	if eff.Kind == ScheduleRetry {
		if eff.Retry == RetryStep {
			m.gated = nil
		} else {
			m.prog.retryDue = true
		}
		return nil
	}
	if r.Err != nil {
		m.effectFailed(eff, r.Err)
		return nil
	}
	m.stepFailures = 0
	switch eff.Kind {
	case ReadMirrorState:
		if !knownState(r.Record.State) || !knownState(r.Record.PrevState) {
			// Written by a newer implementation (EPOCH_FENCING, say); read
			// again later rather than act on what this one cannot follow.
			m.effectFailed(eff, fmt.Errorf("%w: record state %s", ErrInvalidEvent, r.Record.State))
			return nil
		}
		if r.Record.LeaderEpoch > m.leaderEpoch {
			// The coordinator has seen a newer leader: this one is a
			// zombie until metadata says so.
			m.effectFailed(eff, fmt.Errorf("%w: record written at leader epoch %d, this leader is at %d",
				ErrFenced, r.Record.LeaderEpoch, m.leaderEpoch))
			return nil
		}
		m.known = true
		m.rec = r.Record
		m.prog = progress{}
	case WriteMirrorState:
		if eff.Record.State != m.rec.State {
			checked := m.prog
			m.prog = progress{}
			if eff.Record.State == StatePreparing && checked.startChecked {
				m.prog.startChecked, m.prog.lmeKnown = true, true
				m.prog.lme, m.prog.srcLogStart = checked.lme, checked.srcLogStart
			}
		}
		m.rec = eff.Record
		if m.rec.State == StateFailed {
			m.failure = nil
		}
	case SetReadOnly:
		m.access = AccessReadOnly
	case ClearReadOnly:
		m.access = AccessWritable
	case QueryLastMirroredEpoch:
		m.prog.lmeKnown, m.prog.lme, m.prog.srcLogStart = true, r.Epoch, r.LogStartOffset
	case CheckExistingRecords:
		m.prog.startChecked = true
		m.prog.lmeKnown, m.prog.lme, m.prog.srcLogStart = true, r.Epoch, r.LogStartOffset
	case TruncateFully, TruncateAfterEpoch:
		m.prog.truncated = true
		m.logPos = logPos{known: true, offset: r.LogEndOffset, epoch: r.LatestEpoch}
	case WaitForISRTruncation:
		m.prog.isrDone = true
	case AddFetcher:
		m.fetcher.started, m.fetcher.startedAt = true, m.now
	case RemoveFetcher:
		m.fetcher = fetcherState{}
		m.prog.removed, m.prog.removedLEO, m.prog.removedEpoch = true, r.LogEndOffset, r.LatestEpoch
		m.logPos = logPos{known: true, offset: r.LogEndOffset, epoch: r.LatestEpoch}
	case BumpLeaderEpoch:
		m.prog.bumpAccepted = max(m.prog.bumpAccepted, eff.Epoch)
	case AbortOpenTransactions:
		m.prog.aborted = true
		m.logPos = logPos{}
	case AppendMirrorPIDReset:
		m.prog.pidReset = true
		m.logPos = logPos{}
	}
	return nil
}

// effectFailed handles an effect's error: FAILED for a marked error in
// PREPARING or MIRRORING, otherwise retry the next step after a step
// backoff (re-reading the record first after a failed write).
func (m *Machine) effectFailed(eff Effect, err error) {
	m.lastErr = fmt.Sprintf("%s: %v", eff.Kind, err)
	switch eff.Kind {
	case AddFetcher:
		m.fetcher = fetcherState{}
	case WriteMirrorState:
		// Fenced or not, the write may have been stored (a lost response):
		// nothing may be decided on the old record until it is read again.
		m.known = false
		m.prog = progress{}
	}
	// A start's check never fails the partition: FAILED is retried as
	// PREPARING with a plain LME query, which would truncate what the
	// check refused to.
	if isFailed(err) && eff.Kind != CheckExistingRecords && (m.rec.State == StatePreparing || m.rec.State == StateMirroring) {
		m.fail(m.lastErr, isNonRetryable(err))
		return
	}
	next, ok := m.plan()
	if !ok {
		return
	}
	m.stepFailures++
	m.gated = &next
	m.emit(Effect{Kind: ScheduleRetry, Retry: RetryStep,
		At: m.now.Add(jitter(m.cfg.Rand, Backoff(m.cfg.StepInitialBackoff, m.cfg.StepMaxBackoff, m.stepFailures)))}, true)
}
