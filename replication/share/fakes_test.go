package share

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/record"
)

// fakeLogs is the broker's replicas for manager tests: partitions this
// node leads (or not), with real record batches.
type fakeLogs struct {
	mu    sync.Mutex
	parts map[TopicPartition]*fakeLog
	subs  map[chan struct{}][]TopicPartition
}

func newFakeLogs() *fakeLogs {
	return &fakeLogs{parts: map[TopicPartition]*fakeLog{}, subs: map[chan struct{}][]TopicPartition{}}
}

// fakeLog is one partition's log; LSO is the high watermark unless lso is
// set lower (an open transaction).
type fakeLog struct {
	fl       *fakeLogs
	tp       TopicPartition
	leader   int32 // the leading node; 1 is this broker
	epoch    int32
	batches  []record.Batch
	logStart int64
	hwm      int64
	lso      int64 // -1: the high watermark
	aborted  []AbortedTxn
}

func (fl *fakeLogs) add(tp TopicPartition) *fakeLog {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	l := &fakeLog{fl: fl, tp: tp, leader: 1, epoch: 1, lso: -1}
	fl.parts[tp] = l
	return l
}

func (fl *fakeLogs) Leader(tp TopicPartition) (PartitionLog, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	l, ok := fl.parts[tp]
	switch {
	case !ok:
		return nil, kerr.UnknownTopicID
	case l.leader != 1:
		return nil, kerr.NotLeaderForPartition
	}
	return fakeLeader{l, l.epoch}, nil
}

func (fl *fakeLogs) CurrentLeader(tp TopicPartition, listener string) LeaderHint {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	l, ok := fl.parts[tp]
	if !ok {
		return LeaderHint{LeaderID: -1, LeaderEpoch: -1}
	}
	return LeaderHint{LeaderID: l.leader, LeaderEpoch: l.epoch,
		Endpoint: &Endpoint{Host: "broker" + fmt.Sprint(l.leader), Port: 9092}}
}

func (fl *fakeLogs) Watch(tps []TopicPartition) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	fl.mu.Lock()
	fl.subs[ch] = tps
	fl.mu.Unlock()
	return ch, func() {
		fl.mu.Lock()
		delete(fl.subs, ch)
		fl.mu.Unlock()
	}
}

// changed wakes the watchers of tp; fl.mu is held.
func (fl *fakeLogs) changedLocked(tp TopicPartition) {
	for ch, tps := range fl.subs {
		if slices.Contains(tps, tp) {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// produce appends a batch of n records (transactional for producer pid
// when pid >= 0) and commits it: the high watermark moves past it.
func (l *fakeLog) produce(n int, pid int64) int64 {
	l.fl.mu.Lock()
	defer l.fl.mu.Unlock()
	base := l.leoLocked()
	recs := make([]record.Record, n)
	for i := range recs {
		v := []byte(fmt.Sprintf("v%d", base+int64(i)))
		recs[i] = record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v))}
	}
	spec := record.BatchSpec{BaseOffset: base, ProducerID: -1, BaseSequence: -1, PartitionLeaderEpoch: l.epoch}
	if pid >= 0 {
		spec.ProducerID, spec.BaseSequence, spec.Transactional = pid, 0, true
	}
	b, err := record.Build(spec, recs, nil)
	if err != nil {
		panic(err)
	}
	l.batches = append(l.batches, b)
	l.hwm = l.leoLocked()
	l.fl.changedLocked(l.tp)
	return base
}

// endTxn appends pid's transaction marker; an abort lists the
// transaction starting at first.
func (l *fakeLog) endTxn(pid int64, commit bool, first int64) {
	l.fl.mu.Lock()
	defer l.fl.mu.Unlock()
	b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid}, commit, 0)
	b.SetBaseOffset(l.leoLocked())
	b.SetCRC()
	l.batches = append(l.batches, b)
	if !commit {
		l.aborted = append(l.aborted, AbortedTxn{ProducerID: pid, FirstOffset: first})
	}
	l.hwm = l.leoLocked()
	l.fl.changedLocked(l.tp)
}

func (l *fakeLog) leoLocked() int64 {
	if len(l.batches) == 0 {
		return l.logStart
	}
	return l.batches[len(l.batches)-1].NextOffset()
}

// setLeader moves the partition's leadership.
func (l *fakeLog) setLeader(leader, epoch int32) {
	l.fl.mu.Lock()
	defer l.fl.mu.Unlock()
	l.leader, l.epoch = leader, epoch
	l.fl.changedLocked(l.tp)
}

// fakeLeader is the partition as one leader epoch sees it.
type fakeLeader struct {
	l     *fakeLog
	epoch int32
}

func (f fakeLeader) LeaderEpoch() int32 { return f.epoch }

func (f fakeLeader) LogStartOffset() int64 {
	f.l.fl.mu.Lock()
	defer f.l.fl.mu.Unlock()
	return f.l.logStart
}

func (f fakeLeader) HighWatermark() int64 {
	f.l.fl.mu.Lock()
	defer f.l.fl.mu.Unlock()
	return f.l.hwm
}

func (f fakeLeader) Read(offset int64, maxBytes int32, readCommitted bool) (LogRead, error) {
	l := f.l
	l.fl.mu.Lock()
	defer l.fl.mu.Unlock()
	if offset < l.logStart || offset > l.leoLocked() {
		return LogRead{}, kerr.OffsetOutOfRange
	}
	bound := l.hwm
	if readCommitted && l.lso >= 0 {
		bound = min(bound, l.lso)
	}
	var rd LogRead
	for _, b := range l.batches {
		if b.LastOffset() < offset || b.BaseOffset() < l.logStart {
			continue
		}
		if b.LastOffset() >= bound || (len(rd.Records) > 0 && len(rd.Records)+len(b) > int(maxBytes)) {
			break
		}
		rd.Records = append(rd.Records, b...)
	}
	if readCommitted {
		rd.Aborted = slices.Clone(l.aborted)
	}
	return rd, nil
}

func (f fakeLeader) OffsetForTimestamp(ts int64) (int64, bool, error) { return 0, false, nil }

// memPersister is an in-memory share coordinator. Tests make it fail or
// stall writes.
type memPersister struct {
	mu     sync.Mutex
	states map[PartitionKey]PersistedState
	reads  []int32 // leader epochs of the reads
	writes []PersistedState
	// failWrite and failRead, when set, make the calls fail.
	failWrite, failRead error
	// stall, when set, blocks writes until it is closed.
	stall chan struct{}
	// stateEpoch fences writes with an older state epoch
	// (FENCED_STATE_EPOCH), as the share coordinator does.
	stateEpoch map[PartitionKey]int32
	// attempts counts Write calls, failed ones too.
	attempts int
	// leaderEpoch is the newest leader epoch a read or write carried:
	// writes from an older one are fenced (FENCED_LEADER_EPOCH), as the
	// share coordinator fences a deposed leader.
	leaderEpoch map[PartitionKey]int32
}

func newMemPersister() *memPersister {
	return &memPersister{states: map[PartitionKey]PersistedState{}, stateEpoch: map[PartitionKey]int32{},
		leaderEpoch: map[PartitionKey]int32{}}
}

func (p *memPersister) Initialize(_ context.Context, key PartitionKey, stateEpoch int32, start int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.states[key] = PersistedState{StateEpoch: stateEpoch, StartOffset: start}
	p.stateEpoch[key] = stateEpoch
	return nil
}

func (p *memPersister) Read(_ context.Context, key PartitionKey, leaderEpoch int32) (PersistedState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads = append(p.reads, leaderEpoch)
	if p.failRead != nil {
		return PersistedState{}, p.failRead
	}
	if e, ok := p.leaderEpoch[key]; ok && leaderEpoch < e {
		return PersistedState{}, kerr.FencedLeaderEpoch
	}
	p.leaderEpoch[key] = leaderEpoch
	st, ok := p.states[key]
	if !ok {
		return PersistedState{StartOffset: -1}, nil
	}
	return st, nil
}

func (p *memPersister) Write(ctx context.Context, key PartitionKey, st PersistedState) error {
	p.mu.Lock()
	p.attempts++
	stall := p.stall
	p.mu.Unlock()
	if stall != nil {
		select {
		case <-stall:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failWrite != nil {
		return p.failWrite
	}
	if e, ok := p.stateEpoch[key]; ok && st.StateEpoch < e {
		return kerr.FencedStateEpoch
	}
	if e, ok := p.leaderEpoch[key]; ok && st.LeaderEpoch < e {
		return kerr.FencedLeaderEpoch
	}
	p.leaderEpoch[key] = st.LeaderEpoch
	p.writes = append(p.writes, st)
	p.states[key] = st
	return nil
}

func (p *memPersister) Delete(_ context.Context, key PartitionKey) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.states, key)
	return nil
}

func (p *memPersister) state(key PartitionKey) PersistedState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.states[key]
}

func (p *memPersister) set(fn func(p *memPersister)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(p)
}

func (p *memPersister) writeCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.writes)
}
