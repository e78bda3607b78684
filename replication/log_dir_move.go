package replication

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/strait-io/strait/storage"
)

// Moving a replica between log directories (AlterReplicaLogDirs), as
// Kafka's ReplicaAlterLogDirsManager does: the partition keeps serving
// from its current log while a future log in the destination is filled
// from it by a mover goroutine (Kafka's ReplicaAlterLogDirsThread fetches
// from the local current replica), the segments first, then the tail
// written meanwhile. Once the future has caught up the mover takes the
// partition's lock exclusively — every append, truncation and high
// watermark move holds it shared —, copies the last batches, and swaps the
// logs (storage.LogManager.ReplaceCurrentWithFuture; Kafka's
// Partition.maybeReplaceCurrentWithFutureReplica). Readers load the log
// pointer once per request: a read that loaded the old log just before
// the swap gets NOT_LEADER_OR_FOLLOWER (a closed log) and retries; the old
// log's files stay open for logDirMoveGrace for reads already holding
// them (fetch responses are sent from the files), then are deleted.

// logDirMoveChunk is how much one copy step reads (Kafka's
// replica.fetch.max.bytes default, 1 MiB).
const logDirMoveChunk = 1 << 20

// logDirMoveIdle is how long the mover waits when it has caught up but
// the swap found new data, or it met an error.
const logDirMoveIdle = 10 * time.Millisecond

// logDirMoveGrace is how long the replaced log's files stay open.
const logDirMoveGrace = 5 * time.Second

// logDirMoves are the movers running, by partition.
type logDirMoves struct {
	mu   sync.Mutex
	byTP map[storage.TopicPartition]*logDirMove
	pace movePace
}

type logDirMove struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// future returns the future log of a partition moving between log
// directories, nil when it is not moving.
func (r *ReplicaManager) futureLog(tp storage.TopicPartition) *storage.Log {
	if f, ok := r.logs.FutureLog(tp); ok {
		return f
	}
	return nil
}

// startLogDirMove starts the mover of p, whose future log exists, unless
// it runs already.
func (r *ReplicaManager) startLogDirMove(p *Partition) {
	r.moves.mu.Lock()
	defer r.moves.mu.Unlock()
	if r.moves.byTP == nil {
		r.moves.byTP = map[storage.TopicPartition]*logDirMove{}
	}
	if _, ok := r.moves.byTP[p.tp]; ok || r.ctx.Err() != nil {
		return // running, or the manager stops (the future stays for the next start)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	mv := &logDirMove{cancel: cancel, done: make(chan struct{})}
	r.moves.byTP[p.tp] = mv
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(mv.done)
		r.runLogDirMove(ctx, p)
		r.moves.mu.Lock()
		if r.moves.byTP[p.tp] == mv {
			delete(r.moves.byTP, p.tp)
		}
		r.moves.mu.Unlock()
	}()
}

// stopLogDirMove stops the partition's mover, if any, and waits for it.
func (r *ReplicaManager) stopLogDirMove(tp storage.TopicPartition) {
	r.moves.mu.Lock()
	mv := r.moves.byTP[tp]
	delete(r.moves.byTP, tp)
	r.moves.mu.Unlock()
	if mv != nil {
		mv.cancel()
		<-mv.done
	}
}

// resumeLogDirMoves starts the movers of the future logs a restart found
// (Kafka's ReplicaManager starts the alter-log-dirs fetchers for them
// when it applies the first image).
func (r *ReplicaManager) resumeLogDirMoves(t *partitionTable) {
	for tp := range r.logs.FutureLogs() {
		if p, ok := t.byTP[tp]; ok {
			r.logger.Info("resuming a replica's move between log directories", "partition", tp.String())
			r.startLogDirMove(p)
		}
	}
}

// runLogDirMove fills the future log and swaps it in; it ends when the
// move is done, cancelled, or the future log is gone.
func (r *ReplicaManager) runLogDirMove(ctx context.Context, p *Partition) {
	pace := &r.moves.pace
	for ctx.Err() == nil {
		fut := r.futureLog(p.tp)
		if fut == nil {
			return
		}
		rate := r.alterLogDirsRate()
		n, caughtUp, err := storage.CopyToFuture(p.Log(), fut, pace.chunk(rate))
		pace.wait(ctx, r.clock.Now(), n, rate)
		switch {
		case errors.Is(err, storage.ErrLogClosed):
			// Deleted or shut down under the copy: look again.
		case err != nil:
			r.logger.Warn("copying a replica to its future log failed; retrying", "partition", p.tp.String(), "err", err)
		case caughtUp:
			done, err := r.swapInFutureLog(ctx, p, fut)
			if done || err != nil {
				if err != nil {
					r.logger.Error("replacing a log with its future log failed", "partition", p.tp.String(), "err", err)
				}
				return
			}
		case n > 0:
			continue // more to copy
		}
		select {
		case <-ctx.Done():
		case <-time.After(logDirMoveIdle):
		}
	}
}

// swapInFutureLog finishes the copy under the partition's exclusive lock
// and swaps the logs; done is false when the future fell behind again.
func (r *ReplicaManager) swapInFutureLog(ctx context.Context, p *Partition, fut *storage.Log) (done bool, err error) {
	p.leaderIsrUpdateLock.Lock()
	if p.removed.Load() || ctx.Err() != nil {
		p.leaderIsrUpdateLock.Unlock()
		return true, nil
	}
	cur := p.Log()
	for caughtUp := false; !caughtUp; {
		// Nothing is written meanwhile: this ends.
		var n int
		if n, caughtUp, err = storage.CopyToFuture(cur, fut, logDirMoveChunk); err != nil || (n == 0 && !caughtUp) {
			p.leaderIsrUpdateLock.Unlock()
			if err != nil && !errors.Is(err, storage.ErrLogClosed) {
				r.logger.Warn("copying a replica to its future log failed; retrying", "partition", p.tp.String(), "err", err)
			}
			return false, nil // the mover tries again
		}
	}
	l, release, err := r.logs.ReplaceCurrentWithFuture(p.tp)
	if err == nil {
		p.log.Store(l)
	}
	p.leaderIsrUpdateLock.Unlock()
	if err != nil {
		return true, err
	}
	p.watchers.notifyAll()
	r.logger.Info("moved a replica to another log directory", "partition", p.tp.String(),
		"from", filepath.Dir(cur.Dir()), "to", filepath.Dir(l.Dir()), "logEndOffset", l.LogEndOffset())
	go func() {
		select {
		case <-time.After(logDirMoveGrace):
		case <-r.done:
		}
		if err := release(); err != nil {
			r.logger.Warn("deleting the replaced log failed", "partition", p.tp.String(), "err", err)
		}
	}()
	return true, nil
}

// alterLogDirsRate is replica.alter.log.dirs.io.max.bytes.per.second now.
func (r *ReplicaManager) alterLogDirsRate() int64 {
	if r.cfg.AlterLogDirsRate == nil {
		return DefaultReplicationThrottledRate
	}
	return r.cfg.AlterLogDirsRate(r.currentImage())
}

// movePace holds the movers together to
// replica.alter.log.dirs.io.max.bytes.per.second, one bound for the broker
// as Kafka's alter-log-dirs quota is (its ReplicaAlterLogDirsThread skips
// a fetch while the quota is exceeded): after each copy step a mover
// sleeps until the bytes copied since the pace started are due at the
// rate. After a second or more of copying less than the rate allows, or a
// new rate, the pace starts again, so an idle spell is not saved up.
type movePace struct {
	mu    sync.Mutex
	start time.Time
	bytes int64
	rate  int64
}

func limited(rate int64) bool { return rate > 0 && rate < DefaultReplicationThrottledRate }

// chunk is how much one step copies: at most a tenth of a second's worth
// under a limit, so the pace stays smooth.
func (mp *movePace) chunk(rate int64) int32 {
	if !limited(rate) {
		return logDirMoveChunk
	}
	return int32(min(max(rate/10, 4096), logDirMoveChunk))
}

func (mp *movePace) wait(ctx context.Context, now time.Time, n int, rate int64) {
	if !limited(rate) || n == 0 {
		return
	}
	at := func() time.Time {
		return mp.start.Add(time.Duration(float64(mp.bytes) / float64(rate) * float64(time.Second)))
	}
	mp.mu.Lock()
	if mp.rate != rate || at().Before(now.Add(-time.Second)) {
		mp.start, mp.bytes, mp.rate = now, 0, rate
	}
	mp.bytes += int64(n)
	due := at()
	mp.mu.Unlock()
	if d := due.Sub(now); d > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
}
