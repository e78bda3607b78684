package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/coordinator/runtime/runtimetest"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
)

// exampleLog is an in-memory internal topic: the broker's coordinatorLog
// plays this part over the replica manager.
type exampleLog struct {
	mu    sync.Mutex
	parts map[int32][]record.Batch
}

func (l *exampleLog) Append(_ context.Context, p int32, batch []byte) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := record.Batch(append([]byte(nil), batch...))
	b.SetBaseOffset(l.end(p))
	l.parts[p] = append(l.parts[p], b)
	return b.LastOffset(), nil
}

func (l *exampleLog) Read(_ context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out, next := runtimetest.ReadBatches(l.parts[p], from, maxBytes)
	return out, next, l.end(p), nil
}

func (l *exampleLog) end(p int32) int64 {
	if bs := l.parts[p]; len(bs) > 0 {
		return bs[len(bs)-1].NextOffset()
	}
	return 0
}

// exampleShard is the smallest coordinator shard on the runtime: its state
// is a map of committed values plus the values pending in each producer's
// transaction, which a marker commits or drops (how the group coordinator
// keeps transactional offset commits, KIP-447).
type exampleShard struct {
	partition, epoch int32
	log              *exampleLog

	ctx    context.Context // cancelled by Unload
	cancel context.CancelFunc
	timer  *runtime.Timer[string]
	writer *runtime.Writer

	mu      sync.Mutex // guards what follows, the writer's queue and timer callbacks
	loaded  chan struct{}
	closed  bool
	values  map[string]string
	pending map[int64]map[string]string // by producer id
}

func newExampleShard(log *exampleLog, p, epoch int32) *exampleShard {
	s := &exampleShard{partition: p, epoch: epoch, log: log, loaded: make(chan struct{}),
		values: map[string]string{}, pending: map[int64]map[string]string{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.timer = runtime.NewTimer[string](clock.Real{}, &s.mu)
	s.writer = runtime.NewWriter(runtime.WriterConfig{
		Log:       log,
		Partition: p,
		Lock:      &s.mu,
		Serving: func() error {
			if s.closed {
				return runtime.ErrUnloaded
			}
			return nil
		},
		// Diverged would mark the shard loading and reload it through the
		// registry (Registry.Reload); this example has no failing appends.
	})
	return s
}

func (s *exampleShard) Epoch() int32 { return s.epoch }

func (s *exampleShard) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Run loads the partition with its markers, then writes and keeps time
// until Unload.
func (s *exampleShard) Run() {
	l := runtime.Loader{Log: s.log, Topic: "__example", ReadBytes: 1 << 20, MaxBatchBytes: 1 << 20}
	err := l.Replay(s.ctx, s.partition, runtime.Playback{
		Record: func(b runtime.BatchContext, offset int64, rec record.Record) error {
			if b.Transactional {
				s.stage(b.ProducerID, string(rec.Key), string(rec.Value))
			} else {
				s.values[string(rec.Key)] = string(rec.Value)
			}
			return nil
		},
		EndTxnMarker: func(m runtime.EndTxnMarker) error {
			s.complete(m.ProducerID, m.Commit)
			return nil
		},
	})
	if err != nil {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		return
	}
	close(s.loaded)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.writer.Run(s.ctx) }()
	go func() { defer wg.Done(); s.timer.Run(s.ctx) }()
	wg.Wait()
}

func (s *exampleShard) Unload() {
	s.mu.Lock()
	s.closed = true
	s.timer.Clear()
	s.writer.FailQueued(runtime.ErrUnloaded)
	s.mu.Unlock()
	s.cancel()
}

func (s *exampleShard) stage(pid int64, k, v string) {
	if s.pending[pid] == nil {
		s.pending[pid] = map[string]string{}
	}
	s.pending[pid][k] = v
}

func (s *exampleShard) complete(pid int64, commit bool) {
	if commit {
		for k, v := range s.pending[pid] {
			s.values[k] = v
		}
	}
	delete(s.pending, pid)
}

// A coordinator shard on the runtime: a Registry runs it while this broker
// leads its partition; it loads the partition with Loader.Replay
// (transactional records pending under their producer until a marker),
// writes eagerly through a Writer (plain records, a producer's
// transactional batch, the marker ending that transaction, in order), and
// schedules work on a Timer; a new leader epoch reloads it from the log.
func Example() {
	log := &exampleLog{parts: map[int32][]record.Batch{}}
	out := make(chan string, 10)
	shards := runtime.New(func(p, epoch int32, _ *exampleShard) *exampleShard {
		return newExampleShard(log, p, epoch)
	}, runtime.Options{})
	defer shards.Close()

	shards.OnElection(0, 1)
	s, _ := shards.Lookup(0)
	<-s.loaded

	producer := runtime.Producer{ID: 7, Epoch: 0}
	done := func(what string) func(error) {
		return func(err error) { out <- fmt.Sprintf("%s written: %v", what, err) }
	}
	s.mu.Lock()
	// Eager: memory first, then the log; the writes are appended in this
	// order, each done callback running under s.mu.
	s.values["a"] = "1"
	s.writer.Append([]runtime.Record{{Key: []byte("a"), Value: []byte("1")}}, true, done("plain"))
	s.stage(producer.ID, "b", "2")
	s.writer.AppendTransactional(producer, []runtime.Record{{Key: []byte("b"), Value: []byte("2")}}, true, done("transactional"))
	s.complete(producer.ID, true)
	s.writer.AppendEndTxnMarker(producer, true, 3, true, done("commit marker"))
	s.mu.Unlock()
	for range 3 {
		fmt.Println(<-out)
	}

	// Timers are keyed: scheduling "expire" again would replace it.
	s.mu.Lock()
	s.timer.Schedule("expire", time.Millisecond, func() { out <- "timer fired with s.mu held" })
	s.mu.Unlock()
	fmt.Println(<-out)

	// A new leader epoch replaces the shard, which replays the log.
	shards.OnElection(0, 2)
	s, _ = shards.Lookup(0)
	<-s.loaded
	s.mu.Lock()
	fmt.Println("reloaded at epoch", s.Epoch(), "values", s.values, "pending", len(s.pending))
	s.mu.Unlock()
	// Output:
	// plain written: <nil>
	// transactional written: <nil>
	// commit marker written: <nil>
	// timer fired with s.mu held
	// reloaded at epoch 2 values map[a:1 b:2] pending 0
}
