package raftmeta

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// FSM applies the metadata log to an immutable Image (raft.FSM). Apply is
// deterministic: it reads nothing but the records and the previous image
// (no clock, no randomness; the controller chooses topic ids and producer
// id blocks before proposing), so every replica builds the same images.
//
// Apply, Restore and the subscriber callbacks run on raft's FSM goroutine,
// one at a time. Image may be called from any goroutine.
type FSM struct {
	logger    *slog.Logger
	clusterID string

	img atomic.Pointer[Image]
	// applied is the raft index of the last command applied and
	// published (Quorum.CatchUp waits on it).
	applied appliedMark

	// notifyMu is held while an image is published and its subscribers
	// called, and by Subscribe: a subscriber is either called for a delta or
	// registered after its image was published (see Subscribe).
	notifyMu sync.Mutex
	// subsMu guards edits of subs; readers load the slice atomically, so
	// cancel can run inside a callback without deadlocking.
	subsMu sync.Mutex
	subs   atomic.Pointer[[]*subscriber]
}

type subscriber struct {
	fn        func(*Delta, *Image)
	cancelled atomic.Bool
}

// NewFSM returns an FSM at the empty image of the given cluster.
func NewFSM(clusterID string, logger *slog.Logger) *FSM {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &FSM{logger: logger, clusterID: clusterID}
	img := EmptyImage()
	img.ClusterID = clusterID
	f.img.Store(img)
	f.subs.Store(&[]*subscriber{})
	return f
}

// Image returns the newest published image.
func (f *FSM) Image() *Image { return f.img.Load() }

// Subscribe registers fn to be called, on the FSM goroutine and in log
// order, with each delta and the image it produced. fn must not block for
// long: it holds up the application of the metadata log (hand heavy work
// to another goroutine). It must not call Subscribe, nor wait for a
// Controller write: the write waits for this very goroutine to apply it.
// Every image newer than the one Image returns right after Subscribe
// returns reaches fn. cancel stops further calls; it may be called from
// within fn.
func (f *FSM) Subscribe(fn func(d *Delta, img *Image)) (cancel func()) {
	s := &subscriber{fn: fn}
	f.notifyMu.Lock()
	f.subsMu.Lock()
	subs := append(append([]*subscriber(nil), *f.subs.Load()...), s)
	f.subs.Store(&subs)
	f.subsMu.Unlock()
	f.notifyMu.Unlock()
	return func() {
		s.cancelled.Store(true)
		f.subsMu.Lock()
		defer f.subsMu.Unlock()
		old := *f.subs.Load()
		kept := make([]*subscriber, 0, len(old))
		for _, o := range old {
			if o != s {
				kept = append(kept, o)
			}
		}
		f.subs.Store(&kept)
	}
}

// publish makes img current and tells the subscribers.
func (f *FSM) publish(d *Delta, img *Image) {
	f.notifyMu.Lock()
	defer f.notifyMu.Unlock()
	f.img.Store(img)
	for _, s := range *f.subs.Load() {
		if !s.cancelled.Load() {
			s.fn(d, img)
		}
	}
}

// Apply implements raft.FSM. It returns nil, or the error that made it drop
// the batch (the image is then unchanged); the proposer reads it from the
// ApplyFuture's Response.
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	// Even a dropped batch is done with: nothing more will come of it.
	defer f.applied.advance(l.Index)
	records, err := DecodeBatch(l.Data)
	if err != nil {
		f.logger.Error("dropping undecodable metadata batch", "index", l.Index, "err", err)
		return err
	}
	return f.applyRecords(l.Index, records)
}

// applyRecords replays a batch at a raft index and publishes the result.
func (f *FSM) applyRecords(index uint64, records []Record) error {
	b := newBuilder(f.img.Load(), index)
	if err := b.replay(records); err != nil {
		f.logger.Error("dropping metadata batch", "index", index, "err", err)
		return err
	}
	b.next.Offset = index
	f.publish(b.delta(), b.next)
	return nil
}

// Snapshot implements raft.FSM: it captures the current image, which is
// immutable, so Persist can write it while Apply goes on.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{img: f.img.Load()}, nil
}

// Restore implements raft.FSM: it replaces the image with the snapshot's
// and tells the subscribers what differs from the image they had.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	img, err := readSnapshot(rc)
	if err != nil {
		return fmt.Errorf("raftmeta: restore snapshot: %w", err)
	}
	if f.clusterID != "" && img.ClusterID != f.clusterID {
		return fmt.Errorf("raftmeta: restore snapshot: it belongs to cluster %q, this node to %q", img.ClusterID, f.clusterID)
	}
	f.publish(diffImages(f.img.Load(), img), img)
	// The snapshot holds every command up to the last it applied.
	f.applied.advance(img.Offset)
	return nil
}

type fsmSnapshot struct{ img *Image }

// Persist implements raft.FSMSnapshot.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := writeSnapshot(sink, s.img); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("raftmeta: persist snapshot: %w", err)
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot.
func (s *fsmSnapshot) Release() {}
