package mirrorit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
)

// TestMirrorDrillCloneProducersWait: producers hammering a drill clone's
// leader while the clone is being created never get a record in before
// the clone leader has settled the partition (aborted the source's open
// transactions and appended MIRROR_PID_RESET at the clone point, acked):
// until then a produce is refused with LEADER_NOT_AVAILABLE, which clients
// retry. So on every partition the batch at the clone point is the reset,
// and every record the hammers got acknowledged lies after it.
func TestMirrorDrillCloneProducersWait(t *testing.T) {
	t.Parallel()
	src := oneAndOne.start(t, "source")
	dst := oneAndOne.start(t, "destination")
	p := newPair(t, 2*time.Minute, src, dst)
	const topic, clone, partitions = "race", "race-drill", 8
	src.createTopic(t, p.ctx, topic, partitions)
	p.createMirror()
	p.start(topic)
	// Idempotent producers leave producer state for the clone's leader to
	// reset.
	produceMix(t, p.ctx, src, topic, partitions, 50, producerKinds()[:2])
	p.waitMirroring(topic, partitions, time.Minute)

	// Raw produces straight to the leader, in a tight loop from before the
	// clone exists (UNKNOWN_TOPIC_OR_PARTITION, then whatever the leader
	// answers) until each hammer has some records in.
	const hammers, perHammer = 2, 5
	type acked struct {
		partition int32
		offset    int64
	}
	var (
		mu         sync.Mutex
		got        []acked
		refused    = map[int16]int{}
		wg         sync.WaitGroup
		hctx, stop = context.WithTimeout(p.ctx, time.Minute)
		failures   atomic.Int64
	)
	defer stop()
	cl := dst.client(t)
	for part := range int32(partitions) {
		leader := dst.leader(topic, part) // the clone takes the mirror topic's leaders
		for h := range hammers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; n < perHammer && hctx.Err() == nil; {
					off, err := produceRaw(hctx, cl, leader, cloneProduce(t, clone, part, fmt.Sprintf("hammer-%d-%d-%d", part, h, n)))
					if err != nil {
						mu.Lock()
						refused[errCode(err)]++
						mu.Unlock()
						if code := errCode(err); code != kerr.UnknownTopicOrPartition.Code && code != kerr.LeaderNotAvailable.Code &&
							code != kerr.NotLeaderForPartition.Code && hctx.Err() == nil {
							failures.Add(1)
							t.Errorf("produce to %s/%d: %v (not retriable)", clone, part, err)
							return
						}
						continue
					}
					mu.Lock()
					got = append(got, acked{part, off})
					mu.Unlock()
					n++
				}
			}()
		}
	}
	res := cloneTopic(t, p, topic, clone)
	wg.Wait()
	if hctx.Err() != nil || failures.Load() > 0 {
		t.Fatalf("the hammers did not finish: %d records acknowledged, refusals by code %v", len(got), refused)
	}
	p.logf("%d records acknowledged, refusals by code %v", len(got), refused)

	ct := readTopic(t, p.ctx, dst, clone)
	d := record.NewDecompressor()
	for _, pt := range res.Points {
		var reset record.Batch
		for _, b := range ct.partitions[pt.Partition] {
			if b.BaseOffset() == pt.Offset {
				reset = b
			}
		}
		if reset == nil || !d.IsMirrorPidReset(reset) {
			t.Errorf("%s/%d: the batch at the clone point %d is %v, want MIRROR_PID_RESET", clone, pt.Partition, pt.Offset, describeBatch(reset))
		}
		for _, a := range got {
			if a.partition == pt.Partition && a.offset <= pt.Offset {
				t.Errorf("%s/%d: a record was acknowledged at offset %d, at or before the reset at the clone point %d", clone, a.partition, a.offset, pt.Offset)
			}
		}
	}
}

// cloneProduce is a Produce (acks=1, no producer id) of one record.
func cloneProduce(t *testing.T, topic string, part int32, value string) *kmsg.ProduceRequest {
	b, err := record.Build(record.BatchSpec{ProducerID: record.NoProducerID, BaseSequence: record.NoSequence, BaseTimestamp: time.Now().UnixMilli()},
		[]record.Record{{KeyLen: -1, Value: []byte(value), ValueLen: int32(len(value))}}, nil)
	if err != nil {
		t.Error(err)
	}
	return produceRequest(topic, part, 1, 5000, b)
}

// describeBatch names a batch for a failure message.
func describeBatch(b record.Batch) string {
	if b == nil {
		return "missing"
	}
	return fmt.Sprintf("a batch at %d (control %v, producer id %d)", b.BaseOffset(), b.IsControl(), b.ProducerID())
}
