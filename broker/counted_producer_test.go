package broker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// countedProducer writes numbered values (prefix-0, prefix-1, ...) to a
// topic with an acks=all idempotent producer, round robin over the
// partitions, and counts what the cluster acknowledged, so a test can
// read the topic back and count what was lost or duplicated
// (lostAndDuplicates).
type countedProducer struct {
	prod *kgo.Client
	stop chan struct{}
	wg   sync.WaitGroup

	mu    sync.Mutex
	acked []string
	errs  []error
}

// startCountedProducer starts producing to topic until Stop; opts add to
// the producer's options.
func startCountedProducer(ctx context.Context, t testing.TB, c *brokertest.Cluster, topic, prefix string, opts ...kgo.Opt) *countedProducer {
	t.Helper()
	opts = append([]kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.MaxBufferedRecords(200)}, opts...)
	p := &countedProducer{prod: c.Client(t, opts...), stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				return
			default:
			}
			v := fmt.Sprintf("%s-%d", prefix, i)
			p.prod.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
				p.mu.Lock()
				defer p.mu.Unlock()
				if err != nil {
					p.errs = append(p.errs, fmt.Errorf("%s: %w", r.Value, err))
					return
				}
				p.acked = append(p.acked, string(r.Value))
			})
			if i%20 == 19 {
				time.Sleep(5 * time.Millisecond)
			}
		}
	}()
	return p
}

// Acked is how many records were acknowledged so far.
func (p *countedProducer) Acked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// Stop stops producing, waits for every record in flight and returns the
// values acknowledged and the records that failed.
func (p *countedProducer) Stop(ctx context.Context, t testing.TB) (acked []string, errs []error) {
	t.Helper()
	close(p.stop)
	p.wg.Wait()
	if err := p.prod.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.acked), slices.Clone(p.errs)
}
