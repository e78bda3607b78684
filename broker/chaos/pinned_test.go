package chaos

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/strait-io/strait/storage/record"
)

// pinnedProducerID is the producer id in the pinned producer's values
// ("p9-<seq>").
const pinnedProducerID = 9

// Each pinned produce request carries pinnedBatch records per partition
// and waits at most pinnedTimeout for acks=all.
const (
	pinnedBatch   = 10
	pinnedTimeout = 2 * time.Second
)

// pinnedProducer sends acks=all Produce requests to one node only, one
// request at a time and never retried, so every answer is attributable:
// a success is that node's acknowledgement, an error code is that node's
// refusal. Its client is seeded with the node's address alone and its
// dialer refuses every other address.
type pinnedProducer struct {
	node       int32
	cl         *kgo.Client
	partitions []int32
	led        *ledger

	mu       sync.Mutex
	outcomes map[string]int // answer -> partition batches
	failed   int            // partition batches answered with an error or no answer
	stop     chan struct{}
	done     chan struct{}
}

// newPinnedProducer connects to node id's PLAINTEXT address only.
func newPinnedProducer(t testing.TB, addr string, id int32, partitions []int32) *pinnedProducer {
	t.Helper()
	var d net.Dialer
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			if host != addr {
				return nil, fmt.Errorf("pinned to node %d at %s, not dialing %s", id, addr, host)
			}
			return d.DialContext(ctx, network, host)
		}),
		// Produce v12 names topics; v13 would need the topic id.
		kgo.MaxVersions(kversion.V4_0_0()),
		kgo.RequestRetries(0),
	)
	if err != nil {
		t.Fatalf("pinned producer: %v", err)
	}
	t.Cleanup(cl.Close)
	return &pinnedProducer{node: id, cl: cl, partitions: partitions, led: newLedger(), outcomes: map[string]int{},
		stop: make(chan struct{}), done: make(chan struct{})}
}

// start sends requests until Stop.
func (pp *pinnedProducer) start(ctx context.Context) {
	go func() {
		defer close(pp.done)
		seed := pp.cl.SeedBrokers()[0]
		seq := 0
		for {
			select {
			case <-pp.stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(pace):
			}
			req, values, err := pp.request(seq)
			if err != nil {
				pp.note(fmt.Sprintf("building the request: %v", err), len(pp.partitions))
				return
			}
			seq += pinnedBatch * len(pp.partitions)
			rctx, cancel := context.WithTimeout(ctx, pinnedTimeout+3*time.Second)
			kresp, err := seed.Request(rctx, req)
			cancel()
			at := time.Now()
			if err != nil {
				// No answer: the batches may or may not be in the log.
				pp.note("no answer: "+err.Error(), len(pp.partitions))
				continue
			}
			resp := kresp.(*kmsg.ProduceResponse)
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					if rp.ErrorCode != 0 {
						pp.note(kerr.ErrorForCode(rp.ErrorCode).Error(), 1)
						continue
					}
					pp.note("acknowledged", 0)
					for i, v := range values[rp.Partition] {
						pp.led.acked(v, ack{partition: rp.Partition, offset: rp.BaseOffset + int64(i), at: at})
					}
				}
			}
		}
	}()
}

// request is one acks=all Produce request: a plain (non-idempotent)
// batch of pinnedBatch fresh values for each partition.
func (pp *pinnedProducer) request(seq int) (*kmsg.ProduceRequest, map[int32][]string, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = int32(pinnedTimeout / time.Millisecond)
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = chaosTopic
	values := map[int32][]string{}
	now := time.Now().UnixMilli()
	for _, p := range pp.partitions {
		var recs []record.Record
		for range pinnedBatch {
			v := fmt.Sprintf("p%d-%d", pinnedProducerID, seq)
			seq++
			values[p] = append(values[p], v)
			recs = append(recs, record.Record{KeyLen: -1, Value: []byte(v), ValueLen: int32(len(v))})
		}
		b, err := record.Build(record.BatchSpec{
			ProducerID: record.NoProducerID, ProducerEpoch: -1, BaseSequence: record.NoSequence, BaseTimestamp: now,
		}, recs, nil)
		if err != nil {
			return nil, nil, err
		}
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = p
		rp.Records = b
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req, values, nil
}

func (pp *pinnedProducer) note(outcome string, failed int) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.outcomes[outcome]++
	pp.failed += failed
}

// Stop stops sending and waits for the request in flight.
func (pp *pinnedProducer) Stop() {
	close(pp.stop)
	<-pp.done
}

// summary lists the answers the node gave, most frequent first.
func (pp *pinnedProducer) summary() (failed int, text string) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	var keys []string
	for k := range pp.outcomes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := pp.outcomes[keys[i]], pp.outcomes[keys[j]]
		return a > b || a == b && keys[i] < keys[j]
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d× %s", pp.outcomes[k], k))
	}
	return pp.failed, strings.Join(parts, "; ")
}
