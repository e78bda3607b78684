package broker_test

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// droppingConn closes itself shortly after a Produce request was written
// to it, at random: the broker may or may not have appended the batch, and
// the client never learns which, so it must retry the same sequence
// numbers on a new connection (what an idempotent producer is for).
type droppingConn struct {
	net.Conn
	drop   func() bool
	drops  *atomic.Int64
	writes *atomic.Int64
	once   sync.Once
}

func (c *droppingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	// kgo writes each request with one Write: int32 length, int16 api
	// key (0 = Produce), ...
	if err != nil || len(p) < 6 || binary.BigEndian.Uint16(p[4:6]) != 0 {
		return n, err
	}
	c.writes.Add(1)
	if c.drop() {
		c.once.Do(func() {
			c.drops.Add(1)
			// Late enough that the broker usually appends the batch,
			// early enough that the response is usually lost.
			time.AfterFunc(time.Duration(rand.N(5))*time.Millisecond, func() { c.Conn.Close() })
		})
	}
	return n, err
}

// TestIdempotentProducerRetriesNoDuplicates produces with connections
// that die after random Produce requests; every value must be stored
// exactly once and in order in its partition.
func TestIdempotentProducerRetriesNoDuplicates(t *testing.T) {
	b := brokertest.Start(t)
	const topic, partitions, n = "idem", 4, 3000
	createTopic(t, b.Admin(t), topic, partitions)

	var drops, writes atomic.Int64
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(7, 11))
	dialer := func(ctx context.Context, network, host string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		return &droppingConn{Conn: c, drops: &drops, writes: &writes, drop: func() bool {
			rngMu.Lock()
			defer rngMu.Unlock()
			return drops.Load() < 40 && rng.IntN(8) == 0
		}}, nil
	}
	prod := b.Client(t, kgo.Dialer(dialer), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0), kgo.MaxBufferedRecords(16), kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx := testCtx(t, 60*time.Second)
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	for i := 0; i < n; i++ {
		wg.Add(1)
		prod.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: []byte(strconv.Itoa(i))},
			func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			})
	}
	wg.Wait()
	if f := failed.Load(); f != 0 {
		t.Fatalf("%d produces failed, first: %v", f, firstErr.Load())
	}
	if drops.Load() == 0 {
		t.Fatal("no connection was dropped: the test injected no retries")
	}
	t.Logf("connections dropped after a produce: %d of %d produce writes", drops.Load(), writes.Load())

	got := consumeN(t, b, n, []string{topic})
	last := map[int32]int{}
	for p := int32(0); p < partitions; p++ {
		last[p] = int(p) - partitions
	}
	seen := make([]int, n)
	for _, r := range got {
		v, err := strconv.Atoi(string(r.Value))
		if err != nil || v < 0 || v >= n {
			t.Fatalf("%s@%d: value %q", tp(topic, r.Partition), r.Offset, r.Value)
		}
		seen[v]++
		if v != last[r.Partition]+partitions {
			t.Fatalf("%s@%d: value %d follows %d: duplicate, loss or reorder", tp(topic, r.Partition), r.Offset, v, last[r.Partition])
		}
		last[r.Partition] = v
	}
	for v, c := range seen {
		if c != 1 {
			t.Fatalf("value %d stored %d times", v, c)
		}
	}
	// Every partition ends at exactly n/partitions: no duplicate past n.
	offs, err := b.Admin(t).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < partitions; p++ {
		o, _ := offs.Lookup(topic, p)
		if o.Err != nil || o.Offset != n/partitions {
			t.Fatalf("%s end offset %d (%v), want %d", tp(topic, p), o.Offset, o.Err, n/partitions)
		}
	}
}
