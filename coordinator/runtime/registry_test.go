package runtime

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeShard records what the registry does to it. Like the coordinators'
// shards, Run serves until Unload, and Unload is idempotent.
type fakeShard struct {
	p, epoch int32
	prev     *fakeShard
	// gate, if not nil, holds Run after Unload until it is closed: the
	// shard's goroutine still finishing work.
	gate <-chan struct{}
	// onUnload, if not nil, runs on each Unload.
	onUnload func()

	started  chan struct{} // closed when Run starts
	unloaded chan struct{} // closed by the first Unload
	returned atomic.Bool   // Run returned
	unloads  atomic.Int32
	once     sync.Once

	mu     sync.Mutex
	closed bool
}

func (s *fakeShard) Epoch() int32 { return s.epoch }

func (s *fakeShard) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *fakeShard) Run() {
	close(s.started)
	<-s.unloaded
	if s.gate != nil {
		<-s.gate
	}
	s.returned.Store(true)
}

func (s *fakeShard) Unload() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.unloads.Add(1)
	s.once.Do(func() { close(s.unloaded) })
	if s.onUnload != nil {
		s.onUnload()
	}
}

// fakes builds fake shards for a registry and keeps every one it built.
type fakes struct {
	mu    sync.Mutex
	built []*fakeShard
	gate  chan struct{}
}

func (f *fakes) newShard(p, epoch int32, prev *fakeShard) *fakeShard {
	s := &fakeShard{p: p, epoch: epoch, prev: prev, gate: f.gate,
		started: make(chan struct{}), unloaded: make(chan struct{})}
	f.mu.Lock()
	f.built = append(f.built, s)
	f.mu.Unlock()
	return s
}

func (f *fakes) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.built)
}

func newTestRegistry(t *testing.T, opts Options) (*Registry[*fakeShard], *fakes) {
	t.Helper()
	f := &fakes{}
	r := New(f.newShard, opts)
	t.Cleanup(func() { closeWithin(t, r) })
	return r, f
}

// closeWithin closes r, failing the test rather than hanging if a shard
// the registry lost track of (never unloaded) keeps Close waiting.
func closeWithin(t *testing.T, r *Registry[*fakeShard]) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		r.Close()
		close(done)
	}()
	waitClosed(t, done, "Close (a shard was never unloaded)")
}

// lookup is p's shard, failing the test if there is none.
func lookup(t *testing.T, r *Registry[*fakeShard], p int32) *fakeShard {
	t.Helper()
	s, ok := r.Lookup(p)
	if !ok || s == nil {
		t.Fatalf("partition %d has no shard", p)
	}
	return s
}

// waitClosed fails the test unless ch is closed within a few seconds.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestElectionStartsShard(t *testing.T) {
	r, _ := newTestRegistry(t, Options{})
	if _, ok := r.Lookup(3); ok {
		t.Fatal("a partition never elected has a shard")
	}
	if !r.OnElection(3, 5) {
		t.Fatal("first election ignored")
	}
	s := lookup(t, r, 3)
	if s.p != 3 || s.epoch != 5 || s.prev != nil {
		t.Fatalf("shard p=%d epoch=%d prev=%v, want p=3 epoch=5 prev=nil", s.p, s.epoch, s.prev)
	}
	waitClosed(t, s.started, "Run")
}

// A stale or repeated leadership notification must not throw away a live
// shard's memory (CoordinatorRuntime.scheduleLoadOperation ignores loads at
// an epoch not above the partition's).
func TestStaleElectionIgnored(t *testing.T) {
	r, f := newTestRegistry(t, Options{})
	r.OnElection(0, 5)
	live := lookup(t, r, 0)
	for _, epoch := range []int32{5, 4, -1} {
		if r.OnElection(0, epoch) {
			t.Fatalf("election at epoch %d over a live shard at 5 was not ignored", epoch)
		}
	}
	if got := lookup(t, r, 0); got != live {
		t.Fatal("a stale election replaced the live shard")
	}
	if live.unloads.Load() != 0 || f.count() != 1 {
		t.Fatalf("stale elections unloaded %d times and built %d shards", live.unloads.Load(), f.count())
	}
}

func TestNewerElectionReplacesAndUnloadsOld(t *testing.T) {
	r, _ := newTestRegistry(t, Options{})
	r.OnElection(0, 5)
	old := lookup(t, r, 0)
	if !r.OnElection(0, 6) {
		t.Fatal("newer election ignored")
	}
	s := lookup(t, r, 0)
	if s == old || s.epoch != 6 {
		t.Fatalf("partition 0 served at epoch %d by the old shard: %v", s.epoch, s == old)
	}
	if old.unloads.Load() != 1 {
		t.Fatalf("old shard unloaded %d times, want 1", old.unloads.Load())
	}
	waitClosed(t, s.started, "the new shard's Run")
}

// The __mirror_state shard waits for prev's append in flight before it
// reads the log: the registry must hand it the shard it replaces.
func TestNewShardGetsPrev(t *testing.T) {
	r, _ := newTestRegistry(t, Options{})
	r.OnElection(0, 1)
	first := lookup(t, r, 0)
	if first.prev != nil {
		t.Fatal("first shard has a prev")
	}
	r.OnElection(0, 2)
	second := lookup(t, r, 0)
	if second.prev != first {
		t.Fatal("the replacing shard did not get the replaced one as prev")
	}
	if !first.Closed() {
		t.Fatal("prev was not unloaded")
	}
}

// A closed shard serves nothing, so an election at its own epoch (or an
// older one) replaces it: a failed load must not leave the partition
// unserved until the next leader epoch.
func TestElectionReplacesClosedShardAtAnyEpoch(t *testing.T) {
	r, _ := newTestRegistry(t, Options{KeepClosed: true})
	r.OnElection(0, 5)
	failed := lookup(t, r, 0)
	failed.Unload() // as a load that failed closes its shard
	if !r.OnElection(0, 5) {
		t.Fatal("election at the epoch of a closed shard ignored")
	}
	s := lookup(t, r, 0)
	if s == failed || s.prev != failed {
		t.Fatal("closed shard not replaced by one that got it as prev")
	}
	s.Unload()
	if !r.OnElection(0, 3) {
		t.Fatal("election at an epoch older than a closed shard's ignored")
	}
	if n := lookup(t, r, 0); n.epoch != 3 || n.prev != s {
		t.Fatalf("closed shard at 5 replaced by epoch %d, prev is it: %v", n.epoch, n.prev == s)
	}
}

func TestResignationDeletesShard(t *testing.T) {
	r, _ := newTestRegistry(t, Options{})
	r.OnElection(0, 5)
	r.OnElection(1, 5)
	s := lookup(t, r, 0)
	r.OnResignation(0)
	if _, ok := r.Lookup(0); ok {
		t.Fatal("resigned shard still in the registry")
	}
	if !s.Closed() || s.unloads.Load() != 1 {
		t.Fatalf("resigned shard closed=%v unloads=%d", s.Closed(), s.unloads.Load())
	}
	if _, ok := r.Lookup(1); !ok {
		t.Fatal("resigning partition 0 dropped partition 1")
	}
	// The next election starts afresh: no prev to wait for.
	r.OnElection(0, 5)
	if n := lookup(t, r, 0); n == s || n.prev != nil {
		t.Fatal("election after a deleting resignation did not build a fresh shard without prev")
	}
	r.OnResignation(7) // no shard: nothing happens
}

func TestResignationKeepsClosedShard(t *testing.T) {
	r, _ := newTestRegistry(t, Options{KeepClosed: true})
	r.OnElection(0, 5)
	s := lookup(t, r, 0)
	r.OnResignation(0)
	kept, ok := r.Lookup(0)
	if !ok || kept != s {
		t.Fatal("KeepClosed resignation did not keep the shard in place")
	}
	if !s.Closed() || s.unloads.Load() != 1 {
		t.Fatalf("kept shard closed=%v unloads=%d", s.Closed(), s.unloads.Load())
	}
	if got := r.Shards(); len(got) != 1 || got[0] != s {
		t.Fatal("Shards does not list the kept closed shard")
	}
	// A later election, even at the same epoch, gets the closed shard as
	// prev, so it can wait for its write in flight.
	if !r.OnElection(0, 5) {
		t.Fatal("election over a kept closed shard ignored")
	}
	if n := lookup(t, r, 0); n.prev != s {
		t.Fatal("election after a KeepClosed resignation did not get the closed shard as prev")
	}
}

func TestReloadReplacesAtSameEpoch(t *testing.T) {
	r, f := newTestRegistry(t, Options{})
	r.OnElection(2, 7)
	old := lookup(t, r, 2)
	if !r.Reload(2, old) {
		t.Fatal("Reload of the current shard skipped")
	}
	s := lookup(t, r, 2)
	if s == old || s.epoch != 7 || s.prev != old {
		t.Fatalf("reloaded shard: same=%v epoch=%d prev=old:%v, want a new shard at 7 with prev old", s == old, s.epoch, s.prev == old)
	}
	if old.unloads.Load() != 1 || f.count() != 2 {
		t.Fatalf("old unloaded %d times, %d shards built", old.unloads.Load(), f.count())
	}
	waitClosed(t, s.started, "the reloaded shard's Run")
}

// A shard whose reload was decided before it was replaced or resigned must
// not clobber the newer shard nor serve a partition this broker left.
func TestReloadSkippedWhenReplacedOrResigned(t *testing.T) {
	r, f := newTestRegistry(t, Options{})
	r.OnElection(0, 1)
	stale := lookup(t, r, 0)
	r.OnElection(0, 2)
	current := lookup(t, r, 0)
	if r.Reload(0, stale) {
		t.Fatal("Reload of a replaced shard went ahead")
	}
	if lookup(t, r, 0) != current || current.unloads.Load() != 0 {
		t.Fatal("Reload of a replaced shard disturbed the current one")
	}

	r.OnElection(1, 1)
	resigned := lookup(t, r, 1)
	r.OnResignation(1)
	if r.Reload(1, resigned) {
		t.Fatal("Reload of a resigned shard went ahead")
	}
	if _, ok := r.Lookup(1); ok {
		t.Fatal("Reload brought a resigned partition back")
	}
	if f.count() != 3 {
		t.Fatalf("%d shards built, want 3", f.count())
	}
}

func TestCloseUnloadsAllAndWaits(t *testing.T) {
	gate := make(chan struct{})
	f := &fakes{gate: gate}
	r := New(f.newShard, Options{KeepClosed: true})
	for p := range int32(4) {
		r.OnElection(p, 1)
	}
	r.OnResignation(3) // kept closed: Close drops it too
	shards := r.Shards()
	for _, s := range shards {
		waitClosed(t, s.started, "Run")
	}

	closed := make(chan struct{})
	go func() {
		r.Close()
		close(closed)
	}()
	for _, s := range shards {
		waitClosed(t, s.unloaded, "Close to unload every shard")
	}
	select {
	case <-closed:
		t.Fatal("Close returned while the shards' Run were still running")
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	waitClosed(t, closed, "Close")
	for _, s := range shards {
		if !s.returned.Load() {
			t.Fatalf("Close returned before partition %d's Run", s.p)
		}
	}
	if got := r.Shards(); len(got) != 0 {
		t.Fatalf("%d shards left after Close", len(got))
	}
	if _, ok := r.Lookup(0); ok {
		t.Fatal("Lookup found a shard after Close")
	}
}

func TestElectionAfterCloseIgnored(t *testing.T) {
	r, f := newTestRegistry(t, Options{})
	r.OnElection(0, 1)
	old := lookup(t, r, 0)
	r.Close()
	if r.OnElection(0, 2) || r.OnElection(1, 1) {
		t.Fatal("election after Close went ahead")
	}
	if r.Reload(0, old) {
		t.Fatal("Reload after Close went ahead")
	}
	if _, ok := r.Lookup(0); ok || f.count() != 1 {
		t.Fatalf("after Close: shard present=%v, %d shards built", ok, f.count())
	}
	r.OnResignation(0) // harmless
	r.Close()          // idempotent
}

func TestLookupAndSortedShards(t *testing.T) {
	r, _ := newTestRegistry(t, Options{})
	for _, p := range []int32{9, 2, 40, 0, 17, 3} {
		r.OnElection(p, p+1)
	}
	got := r.Shards()
	want := []int32{0, 2, 3, 9, 17, 40}
	if len(got) != len(want) {
		t.Fatalf("Shards returned %d, want %d", len(got), len(want))
	}
	for i, s := range got {
		if s.p != want[i] || s.epoch != want[i]+1 {
			t.Fatalf("Shards[%d] is partition %d epoch %d, want %d epoch %d", i, s.p, s.epoch, want[i], want[i]+1)
		}
		if l := lookup(t, r, s.p); l != s {
			t.Fatalf("Lookup(%d) disagrees with Shards", s.p)
		}
	}
	if _, ok := r.Lookup(1); ok {
		t.Fatal("Lookup found partition 1, never elected")
	}
}

// The coordinators' Unload answers parked requests and cancels work, and
// Loading logs: neither may run under the registry's lock, or a shard
// calling back into the registry would deadlock. Loading runs after the
// replaced shard is unloaded and before the new shard runs.
func TestUnloadAndLoadingRunWithoutLock(t *testing.T) {
	var r *Registry[*fakeShard]
	var events []string
	var mu sync.Mutex
	note := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	f := &fakes{}
	r = New(func(p, epoch int32, prev *fakeShard) *fakeShard {
		s := f.newShard(p, epoch, prev)
		s.onUnload = func() {
			r.Lookup(p) // deadlocks if called with the lock held
			r.Shards()
			note("unload")
		}
		return s
	}, Options{Loading: func(p, epoch int32) {
		if s, ok := r.Lookup(p); !ok || s.epoch != epoch {
			t.Errorf("Loading(%d, %d) ran before the new shard was installed", p, epoch)
		} else {
			// Were Run already started, it would close started well
			// within this wait; since it must not be, the wait times out.
			select {
			case <-s.started:
				t.Errorf("Loading(%d, %d) ran after the new shard's Run started", p, epoch)
			case <-time.After(20 * time.Millisecond):
			}
		}
		note("loading")
	}})
	r.OnElection(0, 1)
	r.OnElection(0, 2)
	r.OnResignation(0)
	closeWithin(t, r)
	mu.Lock()
	defer mu.Unlock()
	want := []string{"loading", "unload", "loading", "unload"}
	if len(events) != len(want) {
		t.Fatalf("events %v, want %v", events, want)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Fatalf("events %v, want %v", events, want)
		}
	}
}

// Elections, resignations and reloads racing each other and Close (run
// with -race): every shard built is unloaded and its Run returned once
// Close returns, and nothing is started after it.
func TestConcurrentChurn(t *testing.T) {
	for _, keep := range []bool{false, true} {
		f := &fakes{}
		r := New(f.newShard, Options{KeepClosed: keep})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					p := int32((g + i) % 4)
					switch i % 4 {
					case 0, 1:
						r.OnElection(p, int32(i/3))
					case 2:
						if s, ok := r.Lookup(p); ok {
							r.Reload(p, s)
						}
					case 3:
						r.OnResignation(p)
					}
					_ = r.Shards()
				}
			}()
		}
		wg.Wait()
		closeWithin(t, r)
		n := f.count()
		if r.OnElection(0, 1<<30) || f.count() != n {
			t.Fatal("election after Close built a shard")
		}
		f.mu.Lock()
		for _, s := range f.built {
			if s.unloads.Load() == 0 || !s.returned.Load() {
				t.Errorf("keep=%v: shard p=%d epoch=%d unloads=%d returned=%v after Close",
					keep, s.p, s.epoch, s.unloads.Load(), s.returned.Load())
			}
		}
		f.mu.Unlock()
	}
}
