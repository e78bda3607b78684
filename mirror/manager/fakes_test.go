package manager

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/mirror/state"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrorstate"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// fakeDest is the destination: one in-memory log per partition this node
// leads, at a leader epoch the test (or the fake controller) sets.
type fakeDest struct {
	mu    sync.Mutex
	parts map[storage.TopicPartition]*fakeLocal
}

type fakeLocal struct {
	log    *storage.Log
	epoch  int32
	access partition.Access
	// accessLog records every SetMirrorAccess that took effect.
	accessLog []partition.Access
	// truncations counts TruncateTo calls that removed data, fullTruncs
	// TruncateFullyAndStartAt calls.
	truncations, fullTruncs int
	pidResets               int
	// aborted counts the transactions AbortOpenTransactions closed.
	aborted int
}

func newFakeDest() *fakeDest { return &fakeDest{parts: map[storage.TopicPartition]*fakeLocal{}} }

// add creates tp's local log, led at epoch.
func (d *fakeDest) add(t *testing.T, tp storage.TopicPartition, epoch int32) {
	t.Helper()
	l, _, err := storage.Open("/data/"+tp.String(), storage.Options{FS: vfs.NewMem(), Clock: clock.Real{},
		Scheduler: storage.InlineScheduler{}, Config: storage.DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	d.mu.Lock()
	d.parts[tp] = &fakeLocal{log: l, epoch: epoch}
	d.mu.Unlock()
}

func (d *fakeDest) local(tp storage.TopicPartition) *fakeLocal {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.parts[tp]
}

func (d *fakeDest) setEpoch(tp storage.TopicPartition, epoch int32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.parts[tp]
	p.epoch, p.access = epoch, partition.AccessUnknown
}

func (d *fakeDest) snapshot(tp storage.TopicPartition) fakeLocal {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := *d.parts[tp]
	p.accessLog = append([]partition.Access(nil), p.accessLog...)
	return p
}

func (d *fakeDest) MirrorLeader(tp storage.TopicPartition, epoch int32) (LeaderPartition, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.parts[tp]
	switch {
	case !ok:
		return nil, fmt.Errorf("%s: %w", tp, kerr.NotLeaderForPartition)
	case p.epoch != epoch:
		return nil, fmt.Errorf("%s at epoch %d, asked %d: %w", tp, p.epoch, epoch, kerr.FencedLeaderEpoch)
	}
	return &fakeLeader{d: d, tp: tp, epoch: epoch, log: p.log}, nil
}

func (d *fakeDest) SetMirrorAccess(tp storage.TopicPartition, epoch int32, a partition.Access) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.parts[tp]
	if !ok || p.epoch != epoch {
		return false
	}
	p.access = a
	p.accessLog = append(p.accessLog, a)
	return true
}

// fakeLeader is a LeaderPartition over the in-memory log; every method
// that changes the log fails once the epoch moved.
type fakeLeader struct {
	d     *fakeDest
	tp    storage.TopicPartition
	epoch int32
	log   *storage.Log
}

func (f *fakeLeader) check() (*fakeLocal, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	p := f.d.parts[f.tp]
	if p.epoch != f.epoch {
		return nil, fmt.Errorf("%s moved to epoch %d: %w", f.tp, p.epoch, kerr.FencedLeaderEpoch)
	}
	return p, nil
}

func (f *fakeLeader) LogStartOffset() int64      { return f.log.LogStartOffset() }
func (f *fakeLeader) LogEndOffset() int64        { return f.log.LogEndOffset() }
func (f *fakeLeader) LatestEpoch() (int32, bool) { return f.log.LatestEpoch() }
func (f *fakeLeader) EndOffsetForEpoch(e int32) (int32, int64, bool) {
	return f.log.EndOffsetForEpoch(e)
}

func (f *fakeLeader) AppendAsFollower(buf []byte) (storage.AppendInfo, error) {
	if _, err := f.check(); err != nil {
		return storage.AppendInfo{}, err
	}
	info, err := f.log.AppendAsFollower(buf)
	if err == nil {
		f.log.UpdateHighWatermark(f.log.LogEndOffset()) // a one-replica ISR
	}
	return info, err
}

func (f *fakeLeader) TruncateTo(off int64) (bool, error) {
	p, err := f.check()
	if err != nil {
		return false, err
	}
	ok, err := f.log.TruncateTo(off)
	if ok {
		f.d.mu.Lock()
		p.truncations++
		f.d.mu.Unlock()
	}
	return ok, err
}

func (f *fakeLeader) TruncateFullyAndStartAt(off int64) error {
	p, err := f.check()
	if err != nil {
		return err
	}
	f.d.mu.Lock()
	p.fullTruncs++
	f.d.mu.Unlock()
	return f.log.TruncateFullyAndStartAt(off)
}

func (f *fakeLeader) MaybeIncrementHighWatermark(int64) (int64, bool) {
	return f.log.HighWatermark(), false
}
func (f *fakeLeader) MaybeIncrementLogStartOffset(off int64) (bool, error) {
	return f.log.MaybeIncrementLogStartOffset(min(off, f.log.HighWatermark()))
}
func (f *fakeLeader) LeaderEpoch() int32          { return f.epoch }
func (f *fakeLeader) TopicID() storage.TopicID    { return f.log.TopicID() }
func (f *fakeLeader) HighWatermark() int64        { return f.log.HighWatermark() }
func (f *fakeLeader) LastStableOffset() int64     { return f.log.LastStableOffset() }
func (f *fakeLeader) ReplicasAt(int64, bool) bool { return true }

func (f *fakeLeader) LastBatchEpoch() int32 {
	// The fake never gives the epoch cache an entry without a batch.
	if e, ok := f.log.LatestEpoch(); ok {
		return e
	}
	return -1
}

func (f *fakeLeader) AppendMirrorPIDReset(context.Context) error {
	p, err := f.check()
	if err != nil {
		return err
	}
	b := record.MirrorPidResetBatch(record.ControlBatchSpec{ProducerID: -1, ProducerEpoch: -1, PartitionLeaderEpoch: f.epoch,
		Timestamp: time.Now().UnixMilli()})
	if _, err := f.log.AppendAsLeader(b, f.epoch, record.OriginCoordinator); err != nil {
		return err
	}
	f.log.UpdateHighWatermark(f.log.LogEndOffset())
	f.d.mu.Lock()
	p.pidResets++
	f.d.mu.Unlock()
	return nil
}

func (f *fakeLeader) AbortOpenTransactions(context.Context) ([]storage.OpenTransaction, error) {
	p, err := f.check()
	if err != nil {
		return nil, err
	}
	aborted, _, err := f.log.AbortOpenTransactions(f.epoch)
	if err != nil {
		return nil, err
	}
	f.log.UpdateHighWatermark(f.log.LogEndOffset())
	f.d.mu.Lock()
	p.aborted += len(aborted)
	f.d.mu.Unlock()
	return aborted, nil
}

// fakeStates is __mirror_state: records with state-epoch and leader-epoch
// fencing, and every stored record in order.
type fakeStates struct {
	mu      sync.Mutex
	recs    map[state.Key]partition.Record
	history map[state.Key][]partition.Record
	writes  int
	// failing: the next writes of a state fail (a coordinator that
	// cannot take them yet); failed counts them.
	failing map[partition.State]int
	failed  int
}

// failNext makes the next n writes of st fail with a retriable error.
func (s *fakeStates) failNext(st partition.State, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing == nil {
		s.failing = map[partition.State]int{}
	}
	s.failing[st] = n
}

func newFakeStates() *fakeStates {
	return &fakeStates{recs: map[state.Key]partition.Record{}, history: map[state.Key][]partition.Record{}}
}

func (s *fakeStates) ReadState(_ context.Context, k state.Key) (partition.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[k]
	if !ok {
		return partition.EmptyRecord(), nil
	}
	return r, nil
}

func (s *fakeStates) WriteState(_ context.Context, k state.Key, rec partition.Record, expected int32) (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing[rec.State] > 0 {
		s.failing[rec.State]--
		s.failed++
		return 0, fmt.Errorf("write-state refused for now: the coordinator does not know leader epoch %d yet", rec.LeaderEpoch)
	}
	cur, ok := s.recs[k]
	if !ok {
		cur = partition.EmptyRecord()
	}
	if cur.StateEpoch != expected || rec.LeaderEpoch < cur.LeaderEpoch {
		return 0, fmt.Errorf("%w: stored se=%d le=%d, write expects se=%d le=%d", partition.ErrFenced, cur.StateEpoch,
			cur.LeaderEpoch, expected, rec.LeaderEpoch)
	}
	if !partition.ValidTransition(cur.State, rec.State) {
		return 0, fmt.Errorf("%w: %s → %s", mirrorstate.ErrInvalidClusterMirrorStates, cur.State, rec.State)
	}
	s.recs[k] = rec
	s.history[k] = append(s.history[k], rec)
	s.writes++
	return rec.StateEpoch, nil
}

func (s *fakeStates) get(k state.Key) (partition.Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[k]
	return r, ok
}

// states lists the states k's record went through.
func (s *fakeStates) states(k state.Key) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.history[k] {
		out = append(out, r.State.String())
	}
	return strings.Join(out, " ")
}

// fakeController bumps leader epochs in the test's metadata.
type fakeController struct {
	mu    sync.Mutex
	calls []bumpCall
	env   *env
}

type bumpCall struct {
	tp              storage.TopicPartition
	epoch, minEpoch int32
}

func (c *fakeController) BumpLeaderEpoch(_ context.Context, tp storage.TopicPartition, epoch, minEpoch int32) error {
	c.mu.Lock()
	c.calls = append(c.calls, bumpCall{tp, epoch, minEpoch})
	c.mu.Unlock()
	c.env.bump(tp, epoch, minEpoch)
	return nil
}

func (c *fakeController) bumps() []bumpCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]bumpCall(nil), c.calls...)
}

// env is a destination node (id 1) with its metadata, fakes and manager.
type env struct {
	t     *testing.T
	dest  *fakeDest
	st    *fakeStates
	ctrl  *fakeController
	mgr   *Manager
	mu    sync.Mutex
	topic string
	id    storage.TopicID
	parts int32
	// epochs are the partitions' leader epochs; mirrorName the topic's
	// mirror.name.
	epochs     map[int32]int32
	mirrorName string
	seeds      []string
	// mirrorConfigs are the mirror's configs besides bootstrap.servers.
	mirrorConfigs map[string]string
}

const nodeID = 1

// image builds the current metadata.
func (e *env) image() *raftmeta.Image {
	e.mu.Lock()
	defer e.mu.Unlock()
	img := raftmeta.EmptyImage()
	img.Brokers[nodeID] = &raftmeta.Broker{ID: nodeID}
	img.Mirrors["m"] = &raftmeta.Mirror{Name: "m"}
	cfgs := map[string]string{"bootstrap.servers": strings.Join(e.seeds, ",")}
	maps.Copy(cfgs, e.mirrorConfigs)
	img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceMirror, Name: "m"}] = cfgs
	t := &raftmeta.Topic{Name: e.topic, ID: raftmeta.Uuid(e.id)}
	for i := range e.parts {
		t.Partitions = append(t.Partitions, &raftmeta.Partition{Topic: e.topic, TopicID: t.ID, Index: i, Replicas: []int32{nodeID},
			ISR: []int32{nodeID}, Leader: nodeID, LeaderEpoch: e.epochs[i]})
	}
	img.Topics[e.topic] = t
	img.TopicsByID[t.ID] = t
	if e.mirrorName != "" {
		img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceTopic, Name: e.topic}] = map[string]string{
			raftmeta.MirrorNameConfig: e.mirrorName}
	}
	return img
}

// setMirrorName changes the topic's mirror.name and publishes.
func (e *env) setMirrorName(v string) {
	e.mu.Lock()
	e.mirrorName = v
	e.mu.Unlock()
	e.mgr.OnMetadata(e.image())
}

// setMirrorConfig sets one of the mirror's configs and publishes.
func (e *env) setMirrorConfig(k, v string) {
	e.mu.Lock()
	if e.mirrorConfigs == nil {
		e.mirrorConfigs = map[string]string{}
	}
	e.mirrorConfigs[k] = v
	e.mu.Unlock()
	e.mgr.OnMetadata(e.image())
}

// bump gives tp a new leader epoch >= minEpoch, as the controller would.
func (e *env) bump(tp storage.TopicPartition, epoch, minEpoch int32) {
	e.mu.Lock()
	next := max(e.epochs[tp.Partition]+1, minEpoch)
	e.epochs[tp.Partition] = next
	e.mu.Unlock()
	e.dest.setEpoch(tp, next)
	e.mgr.OnMetadata(e.image())
}

func (e *env) key(p int32) state.Key {
	return state.Key{Mirror: "m", TopicID: e.id, Partition: p}
}

func (e *env) tp(p int32) storage.TopicPartition {
	return storage.TopicPartition{Topic: e.topic, Partition: p}
}

// newEnv starts a manager mirroring topic (id, parts partitions, all led
// here at epoch) from seeds.
func newEnv(t *testing.T, seeds []string, topic string, id storage.TopicID, parts int32, epoch int32, edit ...func(*Config)) *env {
	t.Helper()
	e := &env{t: t, dest: newFakeDest(), st: newFakeStates(), topic: topic, id: id, parts: parts, epochs: map[int32]int32{},
		mirrorName: "m", seeds: seeds}
	e.ctrl = &fakeController{env: e}
	for p := range parts {
		e.epochs[p] = epoch
		e.dest.add(t, e.tp(p), epoch)
	}
	cfg := Config{NodeID: nodeID, Image: e.image, Destination: e.dest, States: e.st, Controller: e.ctrl,
		Retry: partition.Config{StepInitialBackoff: 10 * time.Millisecond, StepMaxBackoff: 100 * time.Millisecond,
			RetryInitialBackoff: 10 * time.Millisecond, RetryMaxBackoff: 100 * time.Millisecond},
		FetchBackoff: 50 * time.Millisecond, FetchMaxWaitMs: 50, Seed: 1}
	for _, f := range edit {
		f(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.mgr = m
	t.Cleanup(m.Close)
	return e
}

// waitFor polls cond every 10 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting: %s", timeout, what())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
