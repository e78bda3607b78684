package runtime

import (
	"cmp"
	"slices"
	"sync"
)

// Options are a Registry's choices.
type Options struct {
	// KeepClosed keeps a resigned shard in the registry, unloaded, instead
	// of deleting it, so that the shard of a later election of the
	// partition gets it as prev and can wait for work the old shard still
	// has in flight (the __mirror_state coordinator waits for the old
	// shard's append before it reads the log). Lookup and Shards then
	// return such closed shards too. The default deletes it, as Kafka's
	// scheduleUnloadOperation removes the partition's CoordinatorContext.
	KeepClosed bool
	// Loading, if not nil, is called by OnElection once the shard it
	// replaces, if any, is unloaded and before the new one runs (the
	// coordinators log there), without the registry's lock.
	Loading func(p, epoch int32)
}

// Registry is the shard of each internal-topic partition this broker
// leads, and the goroutines running them. It is safe for concurrent use.
// Partition range checks are the caller's: the registry serves any
// partition number it is given.
type Registry[S Shard] struct {
	newShard func(p, epoch int32, prev S) S
	opts     Options

	mu     sync.RWMutex
	shards map[int32]S
	closed bool
	wg     sync.WaitGroup // one per Run not yet returned
}

// New returns a registry serving no partition. newShard builds the shard
// of partition p at leader epoch epoch; prev is the shard it replaces (the
// zero S if none), already out of service but maybe still finishing work.
// newShard is called with the registry's lock held.
func New[S Shard](newShard func(p, epoch int32, prev S) S, opts Options) *Registry[S] {
	return &Registry[S]{newShard: newShard, opts: opts, shards: map[int32]S{}}
}

// OnElection starts serving partition p, led by this broker at epoch: a
// new shard replaces the partition's shard, which is unloaded, and runs on
// a goroutine of its own. It reports whether it did. An election at an
// epoch not newer than a live shard's is ignored, as Kafka's
// CoordinatorRuntime.scheduleLoadOperation ignores a load at an epoch not
// above the partition's: the notification is stale or repeated, and the
// live shard already serves that leadership. A closed shard (resigned, or
// its load failed) is replaced whatever its epoch, since it serves
// nothing. After Close, OnElection does nothing.
func (r *Registry[S]) OnElection(p, epoch int32) bool {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return false
	}
	old, replacing := r.shards[p]
	if replacing && !old.Closed() && old.Epoch() >= epoch {
		r.mu.Unlock()
		return false
	}
	s := r.install(p, epoch, old)
	r.mu.Unlock()
	if replacing {
		old.Unload()
	}
	if r.opts.Loading != nil {
		r.opts.Loading(p, epoch)
	}
	r.start(s)
	return true
}

// Reload replaces old, if it is still partition p's shard, by a new shard
// at the same epoch (built with old as prev), unloading old: the way to
// throw away a shard's memory and replay the partition again, e.g. after
// a failed append left memory ahead of the log. It reports whether it did;
// it does not when old was replaced or resigned meanwhile (the newer shard
// loads on its own; a resigned partition must stay unserved) or the
// registry is closed.
func (r *Registry[S]) Reload(p int32, old S) bool {
	r.mu.Lock()
	if cur, ok := r.shards[p]; r.closed || !ok || cur != old {
		r.mu.Unlock()
		return false
	}
	s := r.install(p, old.Epoch(), old)
	r.mu.Unlock()
	old.Unload()
	r.start(s)
	return true
}

// install makes a new shard partition p's, to be started once the lock is
// released. Called with mu held and the registry open.
func (r *Registry[S]) install(p, epoch int32, prev S) S {
	s := r.newShard(p, epoch, prev)
	r.shards[p] = s
	// Added under mu, which Close takes before it waits: a shard is
	// either in the map Close unloads or never started.
	r.wg.Add(1)
	return s
}

func (r *Registry[S]) start(s S) {
	go func() {
		defer r.wg.Done()
		s.Run()
	}()
}

// OnResignation stops serving partition p: its shard is unloaded, and
// deleted from the registry unless Options.KeepClosed. Nothing happens if
// p has no shard.
func (r *Registry[S]) OnResignation(p int32) {
	r.mu.Lock()
	s, ok := r.shards[p]
	if ok && !r.opts.KeepClosed {
		delete(r.shards, p)
	}
	r.mu.Unlock()
	if ok {
		s.Unload()
	}
}

// Close stops serving every partition: later elections are ignored, every
// shard is unloaded and dropped, and Close returns once every Run
// returned.
func (r *Registry[S]) Close() {
	r.mu.Lock()
	r.closed = true
	shards := make([]S, 0, len(r.shards))
	for _, s := range r.shards {
		shards = append(shards, s)
	}
	clear(r.shards)
	r.mu.Unlock()
	for _, s := range shards {
		s.Unload()
	}
	r.wg.Wait()
}

// Lookup returns partition p's shard, and false if it has none.
func (r *Registry[S]) Lookup(p int32) (S, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.shards[p]
	return s, ok
}

// Shards returns every shard, ordered by partition, so that requests
// spanning partitions (ListGroups, deleting a mirror) visit them in a
// deterministic order.
func (r *Registry[S]) Shards() []S {
	type entry struct {
		p int32
		s S
	}
	r.mu.RLock()
	entries := make([]entry, 0, len(r.shards))
	for p, s := range r.shards {
		entries = append(entries, entry{p, s})
	}
	r.mu.RUnlock()
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.p, b.p) })
	out := make([]S, len(entries))
	for i, e := range entries {
		out[i] = e.s
	}
	return out
}
