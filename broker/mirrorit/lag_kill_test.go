package mirrorit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestMirrorLagZeroIsReadable is issue 33's "done when" for a 3-node
// destination (RF 3, min.insync.replicas 2) mirroring the issue's
// 6-partition topic, whose leaders are killed and restarted while the
// source is written to: whenever describe says a
// MIRRORING partition's lag is 0, a consumer of the destination can read
// every record the source acknowledged before that describe. Counted: the
// source's high watermark taken before each describe (every record
// acknowledged by then is below it) against the destination's high
// watermark asked right after (ListOffsets LATEST, where a consumer's
// reads end). Lag measured to the destination leader's log end said 0
// while a restarted replica held the high watermark back.
func TestMirrorLagZeroIsReadable(t *testing.T) {
	t.Parallel()
	src, dst := startOne(t, "source"), startThree(t, "destination")
	p := newPair(t, 3*time.Minute, src, dst)
	const topic, partitions, kills = "lagzero", 6, 2
	src.createTopic(t, p.ctx, topic, partitions)
	p.createMirror()
	p.start(topic)
	prod := produceInBackground(t, p.ctx, src, topic, partitions, producerKinds()[1], "lz")
	p.waitState(topic, "MIRRORING", partitions, 30*time.Second)

	srcAdm, dstAdm := src.admin(t), dst.admin(t)
	ctx, cancel := context.WithCancel(p.ctx)
	var wg sync.WaitGroup
	var zeros, checked int
	var violations []string
	wg.Go(func() {
		for ctx.Err() == nil {
			before, err := listEnds(ctx, srcAdm, topic)
			if err != nil {
				continue
			}
			td, err := p.describe(topic)
			if err != nil {
				continue
			}
			var zero []int32
			for _, pd := range td.Partitions {
				if pd.State == "MIRRORING" && pd.Lag == 0 {
					zero = append(zero, pd.Partition)
				}
			}
			if len(zero) == 0 {
				continue
			}
			after, err := listEnds(ctx, dstAdm, topic)
			if err != nil {
				continue
			}
			zeros += len(zero)
			for _, part := range zero {
				checked++
				if after[part] < before[part] {
					violations = append(violations, fmt.Sprintf("p%d: describe said lag 0, yet destination consumers read %d records of the %d the source acknowledged before (%d short)",
						part, after[part], before[part], before[part]-after[part]))
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	for range kills {
		time.Sleep(time.Second)
		dp, dl := leaderNotController(dst, topic, partitions)
		p.logf("killing destination node %d (leader of %s/%d)", dl, topic, dp)
		dst.many.Kill(t, dl)
		time.Sleep(1500 * time.Millisecond)
		dst.many.Restart(t, dl)
		p.logf("destination node %d restarted", dl)
	}
	time.Sleep(2 * time.Second)
	acked := prod.stop()
	p.waitMirroring(topic, partitions, time.Minute)
	cancel()
	wg.Wait()
	p.logf("%d describes of lag 0 checked against the destination: %d violations; %d records acknowledged", checked, len(violations), len(acked))
	for i, v := range violations {
		if i == 10 {
			t.Errorf("... and %d more", len(violations)-10)
			break
		}
		t.Error(v)
	}
	if zeros == 0 {
		t.Fatal("describe never said lag 0 while the destination was checked: the test proves nothing")
	}
	a := auditLedger(acked, storedValues(t, readTopic(t, p.ctx, dst, topic)))
	assertLedger(t, "destination", a)
}

// listEnds is the high watermark of every partition of topic, as a
// consumer's ListOffsets LATEST answers it.
func listEnds(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int64, error) {
	l, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = l.Error()
	}
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	l.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out, nil
}
