package coordinator

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/producerid"
)

func TestInitProducerID(t *testing.T) {
	var mu sync.Mutex
	var blocks int
	fail := false
	h := newHarness(t, func(c *Config) {
		c.AllocateProducerIDs = func(context.Context) (int64, int32, error) {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return 0, 0, errors.New("controller unavailable")
			}
			blocks++
			return int64(blocks-1) * 1000, 3, nil // tiny blocks to cross them
		}
	})
	init := func(v int16, txn *string, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version = v
		req.TransactionalID = txn
		req.ProducerID, req.ProducerEpoch = pid, epoch
		return h.c.InitProducerID(clientCtx("p"), req)
	}
	var got []int64
	for range 4 {
		r := init(4, nil, -1, -1)
		if r.ErrorCode != 0 || r.ProducerEpoch != 0 {
			t.Fatalf("init: %+v", r)
		}
		got = append(got, r.ProducerID)
	}
	if want := []int64{0, 1, 2, 1000}; !equalInt64s(got, want) {
		t.Fatalf("producer ids %v, want %v", got, want)
	}
	// An idempotent producer re-initializing with its id gets a new id at
	// epoch 0: Kafka bumps epochs only for transactional ids.
	if r := init(4, nil, 1000, 3); r.ErrorCode != 0 || r.ProducerID != 1001 || r.ProducerEpoch != 0 {
		t.Fatalf("re-init: %+v", r)
	}
	// Only one of id and epoch set.
	if r := init(3, nil, 5, -1); r.ErrorCode != invalidRequest || r.ProducerID != -1 || r.ProducerEpoch != -1 {
		t.Fatalf("half-set id: %+v", r)
	}
	if r := init(3, nil, -1, 2); r.ErrorCode != invalidRequest {
		t.Fatalf("half-set epoch: %+v", r)
	}
	// Transactional ids are refused.
	if r := init(4, kmsg.StringPtr("txn-1"), -1, -1); r.ErrorCode != invalidRequest || r.ProducerID != -1 {
		t.Fatalf("transactional: %+v", r)
	}
	// The controller cannot hand out a block: retriable error.
	init(4, nil, -1, -1) // 1002, the last of the block
	mu.Lock()
	fail = true
	mu.Unlock()
	if r := init(4, nil, -1, -1); r.ErrorCode != coordinatorLoadInProgress || r.ProducerID != -1 {
		t.Fatalf("allocation failure: %+v", r)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if r := init(0, nil, 77, 7); r.ErrorCode != 0 || r.ProducerID != 2000 {
		t.Fatalf("v0 ignores id/epoch: %+v", r)
	}
}

func TestProducerIDsConcurrentAreUnique(t *testing.T) {
	var mu sync.Mutex
	next := int64(0)
	h := newHarness(t, func(c *Config) {
		c.AllocateProducerIDs = func(context.Context) (int64, int32, error) {
			mu.Lock()
			defer mu.Unlock()
			first := next
			next += 10
			return first, 10, nil
		}
	})
	const n, each = 8, 40
	ids := make(chan int64, n*each)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				req := kmsg.NewPtrInitProducerIDRequest()
				req.Version = 4
				r := h.c.InitProducerID(context.Background(), req)
				if r.ErrorCode != 0 {
					t.Errorf("init: %d", r.ErrorCode)
					return
				}
				ids <- r.ProducerID
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("producer id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != n*each {
		t.Fatalf("%d ids", len(seen))
	}
}

func equalInt64s(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A coordinator given the broker's producer id manager hands out its ids:
// another user of the same manager (the transaction coordinator) and the
// coordinator never hand out the same id, and share one block.
func TestInitProducerIDSharesTheBrokersManager(t *testing.T) {
	var allocations int
	pids := producerid.New(func(context.Context) (int64, int32, error) {
		allocations++
		return 5000, 1000, nil
	}, nil)
	h := newHarness(t, func(c *Config) {
		c.ProducerIDs = pids
		c.AllocateProducerIDs = func(context.Context) (int64, int32, error) {
			t.Error("the coordinator allocated a block of its own")
			return 0, 0, errors.New("unused")
		}
	})
	var got []int64
	for i := range 4 {
		if i%2 == 1 {
			id, err := pids.Generate(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
			continue
		}
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version = 4
		r := h.c.InitProducerID(clientCtx("p"), req)
		if r.ErrorCode != 0 {
			t.Fatalf("init: %+v", r)
		}
		got = append(got, r.ProducerID)
	}
	if want := []int64{5000, 5001, 5002, 5003}; !equalInt64s(got, want) || allocations != 1 {
		t.Fatalf("ids %v from %d allocations, want %v from 1", got, allocations, want)
	}
}
