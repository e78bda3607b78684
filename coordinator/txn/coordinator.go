package txn

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/coordinator/runtime"
)

// Coordinator is the transaction coordinator of one broker: the shards of
// the __transaction_state partitions it leads, and the background work
// (marker senders, timeout and expiry scans) that goes with them. Its
// methods are safe for concurrent use.
type Coordinator struct {
	cfg Config
	log *slog.Logger
	reg *runtime.Registry[*shard]

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // marker senders and scans

	// idleSenders hands a prepared transaction to a marker sender
	// waiting for one (senders.go); sendersStarted counts the senders
	// started, sendersIdle those waiting.
	idleSenders    chan func()
	sendersStarted atomic.Int64
	sendersIdle    atomic.Int64
}

// New returns a coordinator that serves no partition until OnElection,
// and starts its timeout and expiry scans.
func New(cfg Config) (*Coordinator, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Coordinator{cfg: cfg, log: cfg.Logger.With("component", "txn-coordinator"), idleSenders: make(chan func())}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.reg = runtime.New(func(p, epoch int32, _ *shard) *shard { return newShard(c, p, epoch) }, runtime.Options{
		Loading: func(p, epoch int32) {
			c.log.Info("loading transactions", "partition", p, "coordinatorEpoch", epoch)
		},
	})
	c.goScan(cfg.AbortInterval, c.abortTimedOut)
	c.goScan(cfg.RemoveInterval, c.expireIDs)
	return c, nil
}

// OnElection starts serving partition p of __transaction_state, which this
// broker now leads at epoch: the coordinator epoch of its transactions, as
// Kafka's TransactionStateManager takes the partition's leader epoch.
func (c *Coordinator) OnElection(p, epoch int32) {
	if p < 0 || p >= c.cfg.NumPartitions {
		return
	}
	c.reg.OnElection(p, epoch)
}

// OnResignation stops serving partition p.
func (c *Coordinator) OnResignation(p int32) { c.reg.OnResignation(p) }

// Close stops every shard and the background work and waits for them.
func (c *Coordinator) Close() {
	c.cancel()
	c.reg.Close()
	c.wg.Wait()
}

// PartitionFor is the __transaction_state partition of a transactional id
// (TransactionStateManager.partitionFor: the same hash as groups').
func (c *Coordinator) PartitionFor(id string) int32 {
	return coordinator.PartitionFor(id, c.cfg.NumPartitions)
}

// shardOf returns the shard serving id, or the error to answer:
// NOT_COORDINATOR when this broker does not lead id's partition (or just
// stopped), COORDINATOR_LOAD_IN_PROGRESS while it loads it.
func (c *Coordinator) shardOf(id string) (*shard, *kerr.Error) {
	s, ok := c.reg.Lookup(c.PartitionFor(id))
	if !ok {
		return nil, kerr.NotCoordinator
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, kerr.NotCoordinator
	case !s.loaded:
		return nil, kerr.CoordinatorLoadInProgress
	}
	return s, nil
}

func (c *Coordinator) nowMs() int64 { return c.cfg.Clock.Now().UnixMilli() }

// goScan runs scan every interval until Close.
func (c *Coordinator) goScan(interval time.Duration, scan func()) {
	c.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-c.ctx.Done():
				return
			case <-t.C:
				scan()
			}
		}
	})
}

// loadedShards are the shards serving now.
func (c *Coordinator) loadedShards() []*shard {
	var out []*shard
	for _, s := range c.reg.Shards() {
		s.mu.Lock()
		if s.loaded && !s.closed {
			out = append(out, s)
		}
		s.mu.Unlock()
	}
	return out
}
