package mirrorit

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage/record"
)

// TestMirrorFailedRetryKeepsLog: a mirror partition that fails while
// MIRRORING and is retried keeps its log (KIP-1279 FAILED → PREPARING
// aligns with the source; a log that was mirroring is already a prefix of
// it). The source is kfake; once the mirror has copied everything, it
// serves one corrupt batch (FAILED, corrupt-batch, retried after 200 ms)
// and from then on answers the mirror's fetches slowly, as a distant
// source would. A consumer of the destination reads all along. The retry
// must not empty the destination's log: its high watermark never goes
// back, the consumer never reads an offset twice, no follower truncates
// below its high watermark, and the mirror catches up byte for byte with
// the records produced after the failure.
func TestMirrorFailedRetryKeepsLog(t *testing.T) {
	t.Parallel()
	src := startFake(t, "flaky-kfake", 1)
	dst := startThree(t, "destination",
		brokertest.WithConfig("mirror.failed.retry.initial.backoff.ms=200", "mirror.failed.retry.max.backoff.ms=400"))
	p := newPair(t, 2*time.Minute, src, dst)
	const topic, before, after = "retried", 300, 200
	src.createTopic(t, p.ctx, topic, 1)
	kc := src.fake

	var corruptArmed, slow atomic.Bool
	var corruptServed atomic.Int64
	kc.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		mirrorFetch := false
		var offset int64
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				if rp.PartitionMaxBytes > 1 { // the mirror fetcher's, not a 1-byte probe
					mirrorFetch, offset = true, rp.FetchOffset
				}
			}
		}
		if !mirrorFetch {
			return nil, nil, false
		}
		if !corruptArmed.CompareAndSwap(true, false) {
			if slow.Load() {
				time.Sleep(400 * time.Millisecond)
			}
			return nil, nil, false
		}
		// One batch at the fetch offset whose CRC does not match its bytes.
		bad := record.Batch(bytes.Clone(testBatch(t, offset, 0, "x0", "x1", "x2")))
		bad[len(bad)-3] ^= 0x20
		resp := answerFetch(req, func(_ kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition) {
			sp.RecordBatches, sp.HighWatermark, sp.LastStableOffset = bad, bad.NextOffset(), bad.NextOffset()
		})
		corruptServed.Add(1)
		slow.Store(true)
		return resp, nil, true
	})

	produce := func(from, n int) {
		t.Helper()
		cl := src.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		for i := from; i < from+n; i += 10 {
			var recs []*kgo.Record
			for j := i; j < i+10; j++ {
				recs = append(recs, &kgo.Record{Partition: 0, Value: recordValue("retry", j)})
			}
			if err := cl.ProduceSync(p.ctx, recs...).FirstErr(); err != nil {
				t.Fatalf("produce to kfake: %v", err)
			}
		}
	}
	produce(0, before)
	p.createMirror()
	p.start(topic)
	p.waitMirroring(topic, 1, time.Minute)

	mon := monitorHW(t, p.ctx, p.dst, topic)
	reader := readDestination(t, p, topic)

	corruptArmed.Store(true)
	p.waitFor(time.Minute, "the corrupt batch fails the partition", func() string {
		if corruptServed.Load() == 0 {
			return "no corrupt batch served yet"
		}
		td, err := p.describe(topic)
		if err != nil {
			return err.Error()
		}
		// FAILED lasts about the retry backoff; the retry count stays.
		if len(td.Partitions) != 1 || td.Partitions[0].State != "FAILED" && td.Partitions[0].RetryCount < 1 {
			return "not FAILED yet:" + formatPartitions(td)
		}
		return ""
	})
	produce(before, after)
	p.waitMirroring(topic, 1, time.Minute)
	reader.waitFor(t, p, before+after)
	_, decreases := mon.stop()
	rereads := reader.stop()

	var truncLines []string
	for _, n := range dst.many.Nodes() {
		for _, line := range strings.Split(n.Logs(), "\n") {
			if strings.Contains(line, "truncating below the high watermark") {
				truncLines = append(truncLines, line)
			}
		}
	}
	starts := startOffsets(t, p, topic)
	t.Logf("counts: corrupt batches served=%d; high watermark decreases=%d %v; offsets read again=%d %v; follower truncations below the HW=%d; log start %v",
		corruptServed.Load(), len(decreases), decreases, len(rereads), rereads, len(truncLines), starts)
	if len(decreases) != 0 {
		t.Errorf("the destination's high watermark went back %d times: %v", len(decreases), decreases)
	}
	if len(rereads) != 0 {
		t.Errorf("the destination's consumer saw offsets vanish and come back %d times: %v", len(rereads), rereads)
	}
	if len(truncLines) != 0 {
		t.Errorf("destination followers truncated below the high watermark:\n%s", strings.Join(truncLines, "\n"))
	}
	if starts[0] != 0 {
		t.Errorf("destination log start %d, want 0", starts[0])
	}
	p.checkIdentity(topic, before+after)
}

// destinationReader consumes a destination topic from its start and
// records every offset it reads at or below one it already read: records
// that vanished from the log and came back.
type destinationReader struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	next    map[int32]int64
	rereads []string
}

func readDestination(t *testing.T, p *pair, topic string) *destinationReader {
	t.Helper()
	cl := p.dst.client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100*time.Millisecond))
	ctx, cancel := context.WithCancel(p.ctx)
	r := &destinationReader{cancel: cancel, done: make(chan struct{}), next: map[int32]int64{}}
	go func() {
		defer close(r.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(rec *kgo.Record) {
				r.mu.Lock()
				defer r.mu.Unlock()
				if next, ok := r.next[rec.Partition]; ok && rec.Offset < next {
					r.rereads = append(r.rereads, fmt.Sprintf("p%d: offset %d after %d", rec.Partition, rec.Offset, next-1))
				}
				r.next[rec.Partition] = max(r.next[rec.Partition], rec.Offset+1)
			})
		}
	}()
	t.Cleanup(func() { r.stop() })
	return r
}

// waitFor waits until the reader has read up to offset end of partition 0.
func (r *destinationReader) waitFor(t *testing.T, p *pair, end int64) {
	t.Helper()
	p.waitFor(time.Minute, fmt.Sprintf("the destination consumer reads to offset %d", end), func() string {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.next[0] < end {
			return fmt.Sprintf("read to %d", r.next[0])
		}
		return ""
	})
}

// stop ends reading and returns the offsets read again.
func (r *destinationReader) stop() []string {
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rereads
}
