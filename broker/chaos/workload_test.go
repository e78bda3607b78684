package chaos

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ack is what a produce callback reported for one record.
type ack struct {
	partition int32
	offset    int64
	at        time.Time
}

// ledger records what the producers were told: the partition and offset
// of every acknowledged value, and how many records failed with which
// error. Values are unique ("p<producer>-<sequence>"), so the log can be
// checked value by value.
type ledger struct {
	nAcked  atomic.Int64
	nFailed atomic.Int64

	mu        sync.Mutex
	acks      map[string]ack
	failed    map[string]int  // error text -> records
	latencies []time.Duration // produce call to acknowledgement, per record
}

func newLedger() *ledger {
	return &ledger{acks: map[string]ack{}, failed: map[string]int{}}
}

func (l *ledger) record(r *kgo.Record, err error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.failed[err.Error()]++
		l.nFailed.Add(1)
		return
	}
	l.acks[string(r.Value)] = ack{partition: r.Partition, offset: r.Offset, at: now}
	l.latencies = append(l.latencies, now.Sub(r.Timestamp))
	l.nAcked.Add(1)
}

// acked notes an acknowledgement the test decoded itself.
func (l *ledger) acked(value string, a ack) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acks[value] = a
	l.nAcked.Add(1)
}

// snapshot copies the acknowledgements.
func (l *ledger) snapshot() map[string]ack {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]ack, len(l.acks))
	for v, a := range l.acks {
		out[v] = a
	}
	return out
}

// failures summarises the failed records by error, most frequent first.
func (l *ledger) failures() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return summarizeErrors(l.failed)
}

// summarizeErrors lists error texts with how often they occurred, most
// frequent first, "none" when there is none.
func summarizeErrors(counts map[string]int) string {
	type kv struct {
		err string
		n   int
	}
	var all []kv
	for e, n := range counts {
		all = append(all, kv{e, n})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || all[i].n == all[j].n && all[i].err < all[j].err })
	var parts []string
	for _, e := range all {
		parts = append(parts, fmt.Sprintf("%d× %s", e.n, e.err))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// latency summarises how long acknowledgements took.
func (l *ledger) latency() string {
	l.mu.Lock()
	d := slices.Clone(l.latencies)
	l.mu.Unlock()
	if len(d) == 0 {
		return "none"
	}
	slices.Sort(d)
	q := func(f float64) time.Duration { return d[int(f*float64(len(d)-1))].Round(time.Millisecond) }
	return fmt.Sprintf("p50 %v p99 %v p99.9 %v max %v", q(0.5), q(0.99), q(0.999), q(1))
}

// producer is one kgo client sending "p<id>-<seq>" values round-robin to
// its partitions.
type producer struct {
	id         int
	cl         *kgo.Client
	partitions []int32
	led        *ledger
}

// workload runs producers until stopped.
type workload struct {
	topic     string
	producers []*producer
	stop      chan struct{}
	wg        sync.WaitGroup
}

// produceRate is each producer's records per second. Left unpaced, two
// producers fill a three-node in-process cluster with ~15k records/s and
// starve it (and the packages testing beside it) of CPU; a steady rate
// keeps every fault arriving under load without a million-record
// read-back.
const produceRate = 1500

// pace is how often a producer sends its next burst.
const pace = 20 * time.Millisecond

// producerOpts are the options of every chaos producer: idempotent (kgo's
// default), acks=all, records placed by the test, a bounded buffer so the
// producers do not starve the cluster of CPU.
func producerOpts() []kgo.Opt {
	return []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MaxBufferedRecords(1000),
		kgo.ProducerLinger(5 * time.Millisecond),
	}
}

// startWorkload starts one goroutine per producer; each sends until Stop.
func startWorkload(ctx context.Context, topic string, producers ...*producer) *workload {
	w := &workload{topic: topic, producers: producers, stop: make(chan struct{})}
	for _, p := range producers {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			tick := time.NewTicker(pace)
			defer tick.Stop()
			burst := int(produceRate * pace / time.Second)
			for seq := 0; ; {
				select {
				case <-w.stop:
					return
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				for range burst {
					r := &kgo.Record{
						Topic:     topic,
						Partition: p.partitions[seq%len(p.partitions)],
						Value:     fmt.Appendf(nil, "p%d-%d", p.id, seq),
					}
					p.cl.Produce(ctx, r, p.led.record)
					seq++
				}
			}
		}()
	}
	return w
}

// Stop stops issuing records and waits until every issued record has its
// answer (kgo retries an idempotent record until it is acknowledged or
// fails for good).
func (w *workload) Stop(t testing.TB, timeout time.Duration) {
	t.Helper()
	close(w.stop)
	w.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, p := range w.producers {
		if err := p.cl.Flush(ctx); err != nil {
			t.Fatalf("producer %d: records still unanswered %v after stopping: %v (failures so far: %s)", p.id, timeout, err, p.led.failures())
		}
	}
}
