package partition

// plan returns the next effect the machine needs, given what it knows, or
// false when it has nothing to do (idle, or waiting for news). It is a pure
// function of the machine's fields, so resuming after a leadership change
// or a lost answer is the same code as the first attempt.
func (m *Machine) plan() (Effect, bool) {
	e, ok := m.nextStep()
	e.Mirror = m.mirror
	return e, ok
}

func (m *Machine) nextStep() (Effect, bool) {
	if !m.leader {
		return Effect{}, false
	}
	if m.desired == DesiredNone {
		// Not (or no longer) a mirror topic: only make sure nothing fetches.
		if m.fetcher.active {
			return Effect{Kind: RemoveFetcher}, true
		}
		return Effect{}, false
	}
	if !m.known {
		return Effect{Kind: ReadMirrorState}, true
	}
	s, t := m.rec.State, m.target()

	// Write access first: read-only before anything else a start does, and
	// writable only once STOPPED is persisted (which STOPPING writes only
	// after MIRROR_PID_RESET is acked) and stays the goal.
	want := AccessReadOnly
	if s == StateStopped && t == StateStopped {
		want = AccessWritable
	}
	if m.access != want {
		if want == AccessWritable {
			return Effect{Kind: ClearReadOnly}, true
		}
		return Effect{Kind: SetReadOnly}, true
	}
	if t != s {
		if t == StatePreparing && startsFrom(s) && !m.prog.startChecked {
			return Effect{Kind: CheckExistingRecords}, true
		}
		return m.transition(t), true
	}
	if m.fetcher.active && s != StateMirroring && s != StatePausing && s != StateStopping {
		return Effect{Kind: RemoveFetcher}, true
	}

	switch s {
	case StatePreparing:
		switch {
		case !m.prog.lmeKnown && startsFrom(m.rec.PrevState):
			// The check that preceded this PREPARING was not carried
			// over (its write was retried, or a new leader took over).
			return Effect{Kind: CheckExistingRecords}, true
		case !m.prog.lmeKnown:
			return Effect{Kind: QueryLastMirroredEpoch}, true
		case !m.aligned() && RetryOfAligned(m.rec) && !m.logPos.known:
			// Nothing runs (the FAILED write's removal, or none since
			// this leadership began): the answer is the local log end,
			// which keepsLog needs.
			return Effect{Kind: RemoveFetcher}, true
		case !m.aligned() && m.prog.lme < 0:
			return Effect{Kind: TruncateFully, Offset: m.prog.srcLogStart}, true
		case !m.aligned():
			return Effect{Kind: TruncateAfterEpoch, Epoch: m.prog.lme}, true
		case !m.prog.isrDone:
			return Effect{Kind: WaitForISRTruncation, Offset: m.logPos.offset, AllReplicas: m.cfg.WaitAllReplicas}, true
		}

	case StateMirroring:
		if !m.fetcher.active {
			e := Effect{Kind: AddFetcher, Offset: -1, Epoch: -1}
			if m.logPos.known {
				e.Offset, e.Epoch = m.logPos.offset, m.logPos.epoch
			}
			return e, true
		}
		// DLE ≥ SLE: the fetcher holds a batch above the leader epoch.
		if m.epochWanted > m.leaderEpoch && m.prog.bumpAccepted < m.epochWanted {
			return Effect{Kind: BumpLeaderEpoch, Epoch: m.epochWanted}, true
		}

	case StatePausing:
		if !m.prog.removed {
			return Effect{Kind: RemoveFetcher}, true
		}

	case StateStopping:
		if !m.lmeRecorded() {
			if !m.prog.removed {
				return Effect{Kind: RemoveFetcher}, true
			}
			// New local records must carry an epoch above every mirrored
			// batch, so the LME separates the clusters' histories.
			if need := m.prog.removedEpoch + 1; m.leaderEpoch < need {
				if m.prog.bumpAccepted >= need {
					return Effect{}, false // wait for BecomeLeader at the new epoch
				}
				return Effect{Kind: BumpLeaderEpoch, Epoch: need}, true
			}
			return m.recordLME(), true
		}
		if m.fetcher.active {
			return Effect{Kind: RemoveFetcher}, true
		}
		if !m.prog.aborted {
			return Effect{Kind: AbortOpenTransactions}, true
		}
		if !m.prog.pidReset {
			return Effect{Kind: AppendMirrorPIDReset}, true
		}

	case StateFailed:
		if m.retryable() && !m.prog.retryDue {
			return Effect{Kind: ScheduleRetry, Retry: RetryFailed}, true
		}
	}
	return Effect{}, false
}

// target is the state the partition should be in next.
func (m *Machine) target() State {
	s, d := m.rec.State, m.desired
	if d == DesiredStop {
		switch s {
		case StateStopping:
			if m.stopDone() {
				return StateStopped
			}
			return StateStopping
		case StateStopped:
			return StateStopped
		}
		return StateStopping
	}
	if m.failure != nil && (s == StatePreparing || s == StateMirroring) {
		return StateFailed
	}
	switch s {
	case StateUnknown, StateStopped:
		// Start (or a pause that overtook its start): align first.
		return StatePreparing
	case StatePreparing:
		if m.aligned() && m.prog.isrDone {
			if d == DesiredPause {
				return StatePausing
			}
			return StateMirroring
		}
	case StateMirroring:
		if d == DesiredPause {
			return StatePausing
		}
	case StatePausing:
		// A resume during PAUSING finishes the pause, then resumes.
		if m.prog.removed {
			return StatePaused
		}
	case StatePaused:
		if d == DesiredStart {
			return StateMirroring
		}
	case StateStopping:
		// A stop, once started, completes whatever metadata says next.
		if m.stopDone() {
			return StateStopped
		}
	case StateFailed:
		if m.prog.retryDue {
			return StatePreparing
		}
	}
	return s
}

// startsFrom reports whether a PREPARING entered from s is a start: the
// log may hold records written on this cluster (never mirrored, or written
// after a stop made the topic writable), which CheckExistingRecords
// guards. From FAILED it is a retry of a PREPARING or MIRRORING whose start
// was checked (PrevState FAILED, or MIRRORING for a retry that keeps the
// log: see keepsLog).
func startsFrom(s State) bool { return s == StateUnknown || s == StateStopped }

// aligned reports whether PREPARING's log alignment is done: truncated,
// or nothing to truncate (keepsLog).
func (m *Machine) aligned() bool { return m.prog.truncated || m.keepsLog() }

// RetryOfAligned reports whether rec, a FAILED or PREPARING record, is
// (the retry of) a partition that failed with a log holding nothing but
// the source's history: it had finished alignment (MIRRORING, perhaps
// resumed from PAUSED) when it failed. transition carries that PrevState
// through the retry's FAILED → PREPARING (→ FAILED …) so it survives
// restarts and leader changes; no other path writes a PREPARING or FAILED
// with PrevState MIRRORING. The coordinator derives PrevState the same way
// for writes that do not carry it (mirror/state derivePrevState).
func RetryOfAligned(rec Record) bool {
	return (rec.State == StateFailed || rec.State == StatePreparing) && rec.PrevState == StateMirroring
}

// keepsLog reports whether the retry's PREPARING keeps the local log as it
// is: a retry of an aligned log that still reaches the source's log start.
// KIP-1279's FAILED → PREPARING alignment truncates what the source does
// not have; for such a log that is only a divergent tail (a source unclean
// election), which the mirror fetcher's divergence check cuts on its first
// fetch (LastFetchedEpoch, DivergingEpoch: KIP-320/KIP-595), as it does on
// a resume from PAUSED. The source's LME says nothing about this log (it
// came from the source, records after the source's own stop included), and
// a full truncation would empty readable data only to copy it again. A log
// that ends before the source's log start (retention deleted what follows
// it) cannot continue: it is replaced as on a first start.
func (m *Machine) keepsLog() bool {
	return !m.prog.truncated && RetryOfAligned(m.rec) && m.prog.lmeKnown && m.logPos.known && m.logPos.offset >= m.prog.srcLogStart
}

// retryable reports whether the FAILED record allows another automatic
// retry.
func (m *Machine) retryable() bool {
	n := m.rec.RetryAttempt
	return n >= 1 && m.cfg.RetryMaxAttempts > 0 && n <= m.cfg.RetryMaxAttempts
}

// lmeRecorded reports whether the STOPPING record holds the LME and the
// stop offset: from then on they are never measured again, since the log
// may hold ABORT markers and MIRROR_PID_RESET at the bumped epoch, which
// are not mirrored data.
func (m *Machine) lmeRecorded() bool {
	return m.rec.State == StateStopping && m.rec.LastMirrorOffset >= 0
}

// stopDone reports whether STOPPING did everything STOPPED needs: the LME
// recorded, no transaction left open, MIRROR_PID_RESET acknowledged.
func (m *Machine) stopDone() bool {
	return m.lmeRecorded() && m.prog.aborted && m.prog.pidReset
}

// lmeTrusted reports whether a stop that came from prev may record the log's
// latest epoch as the LME. Only a log that finished alignment (MIRRORING,
// or PAUSING/PAUSED after it) holds nothing but history shared with the
// source; otherwise the stop records −1 and a later failback copies
// everything, rather than keep records the source never had.
func lmeTrusted(prev State) bool {
	return prev == StateMirroring || prev == StatePausing || prev == StatePaused
}

// transition is the write that moves the record to state t.
func (m *Machine) transition(t State) Effect {
	r := m.rec
	r.State, r.PrevState = t, m.rec.State
	r.StateEpoch = m.rec.StateEpoch + 1
	r.LeaderEpoch = m.leaderEpoch
	r.ErrorMessage = ""
	r.LastMirrorEpoch, r.LastMirrorOffset = -1, -1
	switch t {
	case StatePreparing:
		if m.rec.State != StateFailed {
			r.RetryAttempt = 0
		}
		if RetryOfAligned(m.rec) {
			r.PrevState = StateMirroring
		}
	case StateMirroring:
		// Keeps the retry count: a retry is judged by whether mirroring
		// lasts (RetryResetAfter), not by reaching MIRRORING.
	case StatePaused:
		r.LastMirrorOffset = m.prog.removedLEO
		r.RetryAttempt = 0
	case StatePausing:
		r.RetryAttempt = 0
	case StateStopping:
		r.RetryAttempt = 0
		if m.rec.State == StateFailed || RetryOfAligned(m.rec) {
			// A failed log, or one being retried, is as aligned as it
			// was when it failed.
			r.PrevState = m.rec.PrevState
		}
	case StateStopped:
		r.LastMirrorEpoch, r.LastMirrorOffset = m.rec.LastMirrorEpoch, m.rec.LastMirrorOffset
		r.RetryAttempt = 0
	case StateFailed:
		if RetryOfAligned(m.rec) {
			r.PrevState = StateMirroring
		}
		r.ErrorMessage = m.failure.msg
		r.RetryAttempt = m.failure.attempt
	}
	return Effect{Kind: WriteMirrorState, Record: r, ExpectedStateEpoch: m.rec.StateEpoch}
}

// recordLME is STOPPING's second write: the stop offset (the log end
// offset the fetcher left, everything mirrored lies below it) and the LME
// (the epoch of the last mirrored batch), as RemoveFetcher reported them
// under the current leader epoch, after which the stop has written nothing.
//
// It comes before AbortOpenTransactions and MIRROR_PID_RESET, the stop's
// only writes to the log, on purpose. Those batches carry the bumped
// leader epoch and move the log end, so once one is written the log no
// longer tells the mirrored end by itself: a batch at the end of a log is
// as likely a mirrored marker (the source's own COMMIT or ABORT) as one of
// the stop's, and which is which depends on the very LME to be recorded.
// Persisted first, the record carries the mirrored end across a crash or a
// leader change at any point of the stop: a new leader that finds it never
// measures again (lmeRecorded), only aborts what is still open (nothing, if
// the markers were all written) and appends MIRROR_PID_RESET. A stop that
// records nothing until the markers are in would, after a crash between
// the two, record the marker's epoch as the LME, or bump the epoch again
// above its own markers.
func (m *Machine) recordLME() Effect {
	r := m.rec
	r.StateEpoch = m.rec.StateEpoch + 1
	r.LeaderEpoch = m.leaderEpoch
	r.LastMirrorOffset = m.prog.removedLEO
	r.LastMirrorEpoch = -1
	if lmeTrusted(r.PrevState) {
		r.LastMirrorEpoch = m.prog.removedEpoch
	}
	return Effect{Kind: WriteMirrorState, Record: r, ExpectedStateEpoch: m.rec.StateEpoch}
}

// replan emits the next step unless the machine already waits on it. A
// wait or request the new plan no longer needs is abandoned; a local or
// persisted change in flight is always waited for.
func (m *Machine) replan() {
	next, ok := m.plan()
	if m.await != nil {
		waiting := *m.await
		if m.gated != nil {
			waiting = *m.gated
		}
		if !m.await.Kind.cancellable() || (ok && sameStep(next, waiting)) {
			return
		}
		m.await, m.gated = nil, nil
	}
	if ok {
		m.emit(next, true)
	}
}

// emit stamps and queues an effect.
func (m *Machine) emit(e Effect, reply bool) {
	m.seq++
	e.Ref = Ref{LeaderEpoch: m.leaderEpoch, Seq: m.seq}
	e.Reply = reply
	e.Mirror = m.mirror
	switch e.Kind {
	case AddFetcher:
		m.fetcher = fetcherState{active: true, ref: e.Ref}
		m.logPos = logPos{}
	case ScheduleRetry:
		if e.At.IsZero() { // RetryFailed: the record's attempt sets the ceiling
			e.At = m.now.Add(jitter(m.cfg.Rand, Backoff(m.cfg.RetryInitialBackoff, m.cfg.RetryMaxBackoff, int(m.rec.RetryAttempt))))
		}
	}
	m.out = append(m.out, e)
	if reply {
		m.await = &e
	}
}
