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

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage/record"
)

// TestMirrorFailedRetryKeepsLog: a mirror partition that fails while
// MIRRORING and is retried keeps its log (KIP-1279 FAILED → PREPARING
// aligns with the source; a log that was mirroring is already a prefix of
// it). The source is kfake; once the mirror has copied everything, it
// serves one corrupt batch (FAILED, corrupt-batch, retried after 200 ms),
// and would answer a fetch of what was already copied slowly (1.5 s), as
// a long log over a real link would: a retry that empties the log leaves
// readers a gap they cannot miss. A consumer of the destination reads all along. The retry
// must not empty the destination's log: its high watermark never goes
// back, the consumer never reads an offset twice, no follower truncates
// below its high watermark, and the mirror catches up byte for byte with
// the records produced after the failure.
func TestMirrorFailedRetryKeepsLog(t *testing.T) {
	t.Parallel()
	failedRetryKeepsLog(t, false)
}

// TestMirrorFailedRetryNewLeaderKeepsLog: the same, but the destination
// partition's leader crashes while the partition is FAILED (a 3 s retry
// backoff): the broker that takes over knows nothing of the failure but
// the __mirror_state record and its own log, and must keep the log too.
// The crashed broker comes back as a follower with nothing to truncate.
func TestMirrorFailedRetryNewLeaderKeepsLog(t *testing.T) {
	t.Parallel()
	failedRetryKeepsLog(t, true)
}

func failedRetryKeepsLog(t *testing.T, newLeader bool) {
	backoff := "200"
	if newLeader {
		backoff = "3000"
	}
	src := startFake(t, "flaky-kfake", 1)
	dst := startThree(t, "destination",
		brokertest.WithConfig("mirror.failed.retry.initial.backoff.ms="+backoff, "mirror.failed.retry.max.backoff.ms="+backoff))
	p := newPair(t, 2*time.Minute, src, dst)
	const topic, partitions, before, after = "retried", 3, 300, 200
	src.createTopic(t, p.ctx, topic, partitions)
	kc := src.fake

	// victim is the partition that fails: with newLeader, one whose
	// destination leader is not the active controller (see
	// leaderNotController).
	var victim atomic.Int32
	var corruptArmed, copiedOnce atomic.Bool
	var corruptServed atomic.Int64
	kc.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		mirrorFetch, victimIn, recopy := false, false, false
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				// The mirror fetcher's, not a 1-byte probe.
				mirrorFetch = mirrorFetch || rp.PartitionMaxBytes > 1
				if rp.Partition == victim.Load() {
					victimIn, recopy = true, rp.FetchOffset < before
				}
			}
		}
		if !mirrorFetch || !victimIn {
			return nil, nil, false
		}
		if !corruptArmed.CompareAndSwap(true, false) {
			if recopy && copiedOnce.Load() {
				// Copying again what the destination held takes time, as
				// a long log over a real link does: readers see the gap.
				time.Sleep(1500 * time.Millisecond)
			}
			return nil, nil, false
		}
		// For the victim one batch at the fetch offset whose CRC does not
		// match its bytes; the other partitions are told to look again.
		resp := answerFetch(req, func(rp kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition) {
			if rp.Partition != victim.Load() {
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				return
			}
			bad := record.Batch(bytes.Clone(testBatch(t, rp.FetchOffset, 0, "x0", "x1", "x2")))
			bad[len(bad)-3] ^= 0x20
			sp.RecordBatches, sp.HighWatermark, sp.LastStableOffset = bad, bad.NextOffset(), bad.NextOffset()
		})
		corruptServed.Add(1)
		return resp, nil, true
	})

	produce := func(from, n int) {
		t.Helper()
		cl := src.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		for i := from; i < from+n; i += 10 {
			var recs []*kgo.Record
			for j := i; j < i+10; j++ {
				recs = append(recs, &kgo.Record{Partition: victim.Load(), Value: recordValue("retry", j)})
			}
			if err := cl.ProduceSync(p.ctx, recs...).FirstErr(); err != nil {
				t.Fatalf("produce to kfake: %v", err)
			}
		}
	}
	p.createMirror()
	p.start(topic)
	p.waitMirroring(topic, partitions, time.Minute)
	part, leader := leaderNotController(dst, topic, partitions)
	victim.Store(part)
	produce(0, before)
	p.waitMirroring(topic, partitions, time.Minute)
	copiedOnce.Store(true)

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
		for _, pd := range td.Partitions {
			// FAILED lasts about the retry backoff; the retry count stays.
			if pd.Partition == part && (pd.State == "FAILED" || !newLeader && pd.RetryCount >= 1) {
				return ""
			}
		}
		return "not FAILED yet:" + formatPartitions(td)
	})
	if newLeader {
		p.logf("p%d FAILED; crashing its destination leader %d", part, leader)
		dst.many.Kill(t, leader)
		p.waitFor(time.Minute, "a new leader", func() string {
			if l := dst.leader(topic, part); l < 0 || l == leader {
				return fmt.Sprintf("leader %d", l)
			}
			return ""
		})
	}
	produce(before, after)
	p.waitMirroring(topic, partitions, time.Minute)
	reader.waitFor(t, p, part, before+after)
	if newLeader {
		dst.many.Restart(t, leader)
		dst.many.WaitForISR(t, topic, 3, time.Minute)
	}
	_, decreases := mon.stop()
	rereads := reader.stop()

	td, err := p.describe(topic)
	if err != nil {
		t.Fatal(err)
	}
	var truncLines []string
	for _, n := range dst.many.Nodes() {
		for _, line := range strings.Split(n.Logs(), "\n") {
			if strings.Contains(line, "truncating below the high watermark") {
				truncLines = append(truncLines, line)
			}
		}
	}
	starts := startOffsets(t, p, topic)
	t.Logf("counts: corrupt batches served=%d; high watermark decreases=%d %v; offsets read again=%d %v; follower truncations below the HW=%d; log starts %v;%s",
		corruptServed.Load(), len(decreases), decreases, len(rereads), rereads, len(truncLines), starts, formatPartitions(td))
	for _, pd := range td.Partitions {
		if pd.Partition == part && pd.RetryCount < 1 {
			t.Errorf("p%d: retry count %d, want the failure counted", part, pd.RetryCount)
		}
	}
	if len(decreases) != 0 {
		t.Errorf("the destination's high watermark went back %d times: %v", len(decreases), decreases)
	}
	if len(rereads) != 0 {
		t.Errorf("the destination's consumer saw offsets vanish and come back %d times: %v", len(rereads), rereads)
	}
	if len(truncLines) != 0 {
		t.Errorf("destination followers truncated below the high watermark:\n%s", strings.Join(truncLines, "\n"))
	}
	if starts[part] != 0 {
		t.Errorf("destination log start %d, want 0", starts[part])
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

// waitFor waits until the reader has read up to offset end of part.
func (r *destinationReader) waitFor(t *testing.T, p *pair, part int32, end int64) {
	t.Helper()
	p.waitFor(time.Minute, fmt.Sprintf("the destination consumer reads p%d to offset %d", part, end), func() string {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.next[part] < end {
			return fmt.Sprintf("read to %d", r.next[part])
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
