package share

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/raftmeta"
)

// Coordinator is the share coordinator of one broker (Kafka's
// ShareCoordinatorService): the shards of the __share_group_state
// partitions it leads, and the periodic pruning and cold snapshots. Its
// methods are safe for concurrent use.
type Coordinator struct {
	cfg    Config
	log    *slog.Logger
	shards *runtime.Registry[*shard]
	closed atomic.Bool

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the background work
}

// New returns a coordinator that serves no partition until OnElection.
func New(cfg Config) (*Coordinator, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Coordinator{cfg: cfg, log: cfg.Logger.With("component", "share-coordinator")}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.shards = runtime.New(func(p, epoch int32, _ *shard) *shard { return newShard(c, p, epoch) }, runtime.Options{
		Loading: func(p, epoch int32) {
			c.log.Info("loading share-partition state", "partition", p, "epoch", epoch)
		},
	})
	c.wg.Go(c.runBackground)
	return c, nil
}

// OnElection starts serving partition p of __share_group_state, which this
// broker now leads at epoch: the partition is replayed in the background
// (its share-partitions answer COORDINATOR_LOAD_IN_PROGRESS meanwhile).
func (c *Coordinator) OnElection(p, epoch int32) {
	if p < 0 || p >= c.cfg.NumPartitions {
		c.log.Warn("ignoring an election for a partition beyond share.coordinator.state.topic.num.partitions", "partition", p)
		return
	}
	c.shards.OnElection(p, epoch)
}

// OnResignation stops serving partition p: its share-partitions answer
// NOT_COORDINATOR.
func (c *Coordinator) OnResignation(p int32) { c.shards.OnResignation(p) }

// Close stops every shard and the background work and waits for them;
// requests then answer COORDINATOR_NOT_AVAILABLE.
func (c *Coordinator) Close() {
	c.closed.Store(true)
	c.cancel()
	c.shards.Close()
	c.wg.Wait()
}

// PartitionFor is the __share_group_state partition of k.
func (c *Coordinator) PartitionFor(k Key) int32 { return PartitionFor(k, c.cfg.NumPartitions) }

// NumPartitions is the partition count of __share_group_state.
func (c *Coordinator) NumPartitions() int32 { return c.cfg.NumPartitions }

func (c *Coordinator) nowMs() int64 { return c.cfg.Clock.Now().UnixMilli() }

// image is the newest metadata image, never nil.
func (c *Coordinator) image() *raftmeta.Image {
	if img := c.cfg.Image(); img != nil {
		return img
	}
	return raftmeta.EmptyImage()
}

// lockShard returns the shard serving k, locked, or the error code for
// why there is none: NOT_COORDINATOR if this broker does not lead k's
// partition, COORDINATOR_LOAD_IN_PROGRESS while it loads it.
func (c *Coordinator) lockShard(k Key) (*shard, int16) {
	s, ok := c.shards.Lookup(c.PartitionFor(k))
	if !ok {
		return nil, kerr.NotCoordinator.Code
	}
	s.mu.Lock()
	if code := s.errorCode(); code != 0 {
		s.mu.Unlock()
		return nil, code
	}
	return s, 0
}

// target is one share-partition a request names.
type target struct {
	topic     raftmeta.Uuid
	partition int32
}

// outcome is one share-partition's answer.
type outcome struct {
	code int16
	msg  *string
	view view
}

// run decides each target of a request on the shard serving it (Kafka's
// service splits a request into one operation per share-partition), and
// then waits for the writes the decisions queued, so that the shards'
// writers append the whole request at once. verb names the operation in
// error messages ("write", as in "Unable to write share group state").
func (c *Coordinator) run(ctx context.Context, group string, targets []target, verb string, decide func(s *shard, k Key, i int) decision) []outcome {
	outs := make([]outcome, len(targets))
	if c.closed.Load() {
		for i := range outs {
			outs[i] = outcome{code: kerr.CoordinatorNotAvailable.Code, msg: kmsg.StringPtr("Share coordinator is not available.")}
		}
		return outs
	}
	waits := make([]<-chan error, len(targets))
	for i, t := range targets {
		k := Key{GroupID: group, TopicID: t.topic, Partition: t.partition}
		s, code := c.lockShard(k)
		if code != 0 {
			outs[i] = failed(verb, kerr.ErrorForCode(code))
			continue
		}
		d := decide(s, k, i)
		if d.code == 0 {
			waits[i] = s.commitLocked(d.recs)
		}
		s.mu.Unlock()
		outs[i] = outcome{code: d.code, msg: d.msg, view: d.view}
	}
	for i, done := range waits {
		if done == nil {
			continue
		}
		select {
		case err := <-done:
			if err != nil {
				outs[i] = failed(verb, err)
			}
		case <-ctx.Done():
			outs[i] = failed(verb, ctx.Err())
		}
	}
	return outs
}

// failed is the outcome of an operation that failed with err, mapped as
// Kafka's handleOperationException maps it.
func failed(verb string, err error) outcome {
	code := runtime.AppendErrorCode(err)
	desc := err.Error()
	var ke *kerr.Error
	if errors.As(kerr.ErrorForCode(code), &ke) {
		desc = ke.Description
	}
	return outcome{code: code, msg: kmsg.StringPtr(fmt.Sprintf("Unable to %s share group state: %s", verb, desc))}
}

// topicIndexes are the targets of one topic, by index, in request order.
type topicIndexes struct {
	topic   raftmeta.Uuid
	indexes []int
}

// byTopic groups targets by topic, in the order topics first appear, as
// responses list each topic once.
func byTopic(targets []target) []topicIndexes {
	var out []topicIndexes
	at := map[raftmeta.Uuid]int{}
	for i, t := range targets {
		j, ok := at[t.topic]
		if !ok {
			j = len(out)
			at[t.topic] = j
			out = append(out, topicIndexes{topic: t.topic})
		}
		out[j].indexes = append(out[j].indexes, i)
	}
	return out
}
