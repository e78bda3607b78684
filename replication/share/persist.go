package share

import "time"

// BeginWrite starts the next write to the persister when none is out and
// there is something to write: acknowledgements staged for it, or a
// changed durable state. It returns the write's number and the whole state
// to write: what the partition will be once the write succeeds, records a
// member holds written as available with their delivery count.
func (sp *SharePartition) BeginWrite() (uint64, PersistedState, bool) {
	if sp.writing || (!sp.dirty && !sp.hasStaged()) {
		return 0, PersistedState{}, false
	}
	seq := sp.nextSeq
	sp.nextSeq++
	sp.writing, sp.dirty = true, false
	return seq, sp.snapshot(seq), true
}

// Writing reports whether a write is out.
func (sp *SharePartition) Writing() bool { return sp.writing }

func (sp *SharePartition) hasStaged() bool {
	for i := range sp.runs {
		if sp.runs[i].pend.seq == sp.nextSeq {
			return true
		}
	}
	return false
}

// snapshot is the durable state once write seq succeeds.
func (sp *SharePartition) snapshot(seq uint64) PersistedState {
	st := PersistedState{StateEpoch: sp.stateEpoch, LeaderEpoch: sp.leaderEpoch, StartOffset: sp.end}
	front := true
	for i := range sp.runs {
		r := &sp.runs[i]
		state := r.state
		if r.pend.seq != 0 && r.pend.seq <= seq {
			state = r.pend.to
		}
		if state == Acquired {
			state = Available
		}
		if front {
			if state.terminal() {
				continue
			}
			front, st.StartOffset = false, r.first
		}
		if n := len(st.Batches); n > 0 && st.Batches[n-1].DeliveryState == int8(state) && st.Batches[n-1].DeliveryCount == r.deliveries {
			st.Batches[n-1].LastOffset = r.last
			continue
		}
		st.Batches = append(st.Batches, StateBatch{FirstOffset: r.first, LastOffset: r.last, DeliveryState: int8(state), DeliveryCount: r.deliveries})
	}
	return st
}

// EndWrite ends write seq. On success the changes it carried take effect:
// acknowledged and archived records are done with, released ones are
// available again, and the start offset moves past the done records. On
// failure they are dropped: the records stay with their holder, whose lock
// may since have expired (the next ExpireLocks gives them back). It
// reports whether records became available or the window shrank, which a
// parked fetch waits for.
func (sp *SharePartition) EndWrite(seq uint64, ok bool) bool {
	sp.writing = false
	changed := false
	for i := range sp.runs {
		r := &sp.runs[i]
		if r.pend.seq != seq {
			continue
		}
		if ok {
			r.state, r.member, r.session, r.deadline = r.pend.to, "", 0, time.Time{}
			changed = true
		}
		r.pend = pending{}
	}
	if !ok {
		// What the persister holds is unknown: the next write carries
		// the whole state again.
		sp.dirty = true
	}
	sp.runs.coalesce()
	sp.advanceStart()
	return changed
}
