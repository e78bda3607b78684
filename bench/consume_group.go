package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// GroupConfig makes the catch-up read a consumer group's: Members clients
// in one new group, subscribed to the topic from its start, the group
// coordinator (KIP-848, Protocol "consumer") or the members (classic)
// assigning the partitions. What it times is what a team starting a group
// on a backlog waits for: joining, the assignment settling, and the read.
type GroupConfig struct {
	// Members is the number of group members; 0 reads without a group
	// (every partition assigned directly, as ConsumerPerformance does).
	Members int
	// Protocol is "consumer" (KIP-848: kgo.ServerSideBalancer with the
	// uniform assignor) or "classic" (kgo's cooperative-sticky balancer).
	Protocol string
}

// Validate names a bad setting.
func (g GroupConfig) Validate() error {
	if g.Members < 0 {
		return fmt.Errorf("bench: group members %d < 0", g.Members)
	}
	if g.Members > 0 && g.Protocol != "consumer" && g.Protocol != "classic" {
		return fmt.Errorf("bench: group protocol %q: want consumer or classic", g.Protocol)
	}
	return nil
}

// groupWorkload is the Workload name of a group catch-up.
const groupWorkload = "group-catch-up"

// groupReader is a consumer group reading one topic: each member polls on
// its own goroutine, and every record is counted once by partition offset,
// so a record read again after its partition moved (at-least-once
// delivery with periodic commits) is a duplicate, not throughput.
type groupReader struct {
	members []*kgo.Client

	mu   sync.Mutex
	next map[int32]int64 // the offset after the highest record read

	records    atomic.Int64
	bytes      atomic.Int64
	duplicates atomic.Int64
	failed     atomic.Int64
	firstErr   error
	first      atomic.Int64 // unix ns of the first record, 0 before
}

// requireKIP848 fails unless the broker serves ConsumerGroupHeartbeat v1,
// which kgo needs for a KIP-848 group: without it kgo falls back to the
// classic protocol, and the result would be labelled with the wrong one.
func requireKIP848(ctx context.Context, seeds []kgo.Opt) error {
	cl, err := kgo.NewClient(seeds...)
	if err != nil {
		return fmt.Errorf("bench: admin client: %w", err)
	}
	defer cl.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "strait-bench", "1"
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("bench: ApiVersions: %w", err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == kmsg.ConsumerGroupHeartbeat.Int16() && k.MaxVersion >= 1 {
			return nil
		}
	}
	return errors.New("bench: the broker does not serve ConsumerGroupHeartbeat v1 (KIP-848): a consumer-protocol group cannot be measured")
}

func newGroupReader(cfg *ConsumeConfig, start map[int32]int64) (*groupReader, error) {
	group := fmt.Sprintf("strait-bench-%d", time.Now().UnixNano())
	r := &groupReader{next: maps.Clone(start)}
	for i := range cfg.Group.Members {
		opts := append(append(cfg.seeds(),
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(cfg.Topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.ClientID(fmt.Sprintf("strait-bench-member-%d", i)),
		), cfg.Fetch.opts()...)
		if cfg.Group.Protocol == "consumer" {
			// kgo's default balancer, cooperative-sticky, asks the
			// coordinator for its "uniform" assignor.
			opts = append(opts, kgo.ServerSideBalancer())
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("bench: group member %d: %w", i, err)
		}
		r.members = append(r.members, cl)
	}
	return r, nil
}

// close leaves the group: each member commits what it read and leaves,
// so the next run's group is not slowed by this one's members.
func (r *groupReader) close() {
	var wg sync.WaitGroup
	for _, cl := range r.members {
		wg.Go(cl.Close)
	}
	wg.Wait()
}

// run polls every member until stop reports true or ctx ends.
func (r *groupReader) run(ctx context.Context, stop func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, cl := range r.members {
		wg.Go(func() {
			for ctx.Err() == nil {
				if stop() {
					cancel()
					return
				}
				r.poll(ctx, cl)
			}
		})
	}
	wg.Wait()
}

func (r *groupReader) poll(ctx context.Context, cl *kgo.Client) {
	pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	fs := cl.PollFetches(pctx)
	for _, fe := range fs.Errors() {
		if errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, context.DeadlineExceeded) {
			continue
		}
		r.fail(fmt.Errorf("fetch %s[%d]: %w", fe.Topic, fe.Partition, fe.Err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fs.EachRecord(func(rec *kgo.Record) {
		if rec.Offset < r.next[rec.Partition] {
			r.duplicates.Add(1)
			return
		}
		r.next[rec.Partition] = rec.Offset + 1
		r.first.CompareAndSwap(0, time.Now().UnixNano())
		r.records.Add(1)
		r.bytes.Add(int64(len(rec.Value)))
	})
}

func (r *groupReader) fail(err error) {
	r.failed.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.firstErr == nil {
		r.firstErr = err
	}
}

// reached reports whether every partition was read up to until.
func (r *groupReader) reached(until map[int32]int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, end := range until {
		if r.next[p] < end {
			return false
		}
	}
	return true
}

// groupCatchUp reads from start with a consumer group until Bytes are read
// or every partition reached end. Elapsed runs from the members' start,
// so it includes joining the group; FirstRecord says how much of it that
// was.
func groupCatchUp(ctx context.Context, cfg *ConsumeConfig, start, end map[int32]int64) (Result, error) {
	res := Result{Workload: groupWorkload, Broker: cfg.Label}
	if cfg.Group.Protocol == "consumer" {
		if err := requireKIP848(ctx, cfg.seeds()); err != nil {
			return res, err
		}
	}
	prof := cfg.Profile.start(ctx, res.Workload, cfg.Label)
	defer prof.stopWindows()
	cost, err := startCost(cfg.Proc, cfg.BrokerPID)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	r, err := newGroupReader(cfg, start)
	if err != nil {
		return res, err
	}
	mon := startMonitor(cfg.Progress, cost, func(el time.Duration) string {
		return rateLine(cfg.Label, groupWorkload, el, r.records.Load(), r.bytes.Load())
	})
	r.run(ctx, func() bool {
		return r.bytes.Load() >= cfg.Bytes || r.reached(end) || r.failed.Load() > 0
	})
	elapsed := time.Since(t0)
	mon.end()
	r.close()
	res.Records, res.Bytes = r.records.Load(), r.bytes.Load()
	res.Duplicates = r.duplicates.Load()
	res.Errors = r.failed.Load()
	if f := r.first.Load(); f > 0 {
		res.FirstRecord = time.Unix(0, f).Sub(t0)
	}
	res.finish(elapsed)
	if res.Cost, err = cost.finish(res.Bytes); err != nil {
		return res, err
	}
	if res.Profiles, err = prof.finish(ctx); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("bench: group catch-up: %w", err)
	}
	if r.firstErr != nil {
		res.FirstError = r.firstErr.Error()
		return res, fmt.Errorf("bench: group catch-up: %w", r.firstErr)
	}
	return res, nil
}
