package mirrorit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestMirrorIntoSmallSegments mirrors into a destination topic with
// segment.bytes=8192 (the operator's: mirror.topic.properties.exclude keeps
// the source's default out) on a three-node destination. One fetch returns
// far more than a segment (the mirror paused while the source wrote about
// 80 KB per partition): the mirror leader appends it over many segments,
// rolling as needed, and so do the destination's followers (their replica
// fetchers fetch the same sets), so the destination is byte for byte the
// source at the same offsets and its high watermark follows. A single
// batch larger than a segment cannot be stored: that partition goes FAILED
// naming RECORD_LIST_TOO_LARGE, loudly, and the other keeps mirroring.
// Before the fix the whole fetched set was checked against segment.bytes
// and the partitions failed with "message batch size is N bytes in
// append, which exceeds the maximum configured segment size".
func TestMirrorIntoSmallSegments(t *testing.T) {
	p := newPair(t, 2*time.Minute, startOne(t, "source"), startThree(t, "destination"))
	const topic, partitions, segmentBytes = "small-segments", 2, 8192
	p.src.createTopic(t, p.ctx, topic, partitions)
	p.createMirror("mirror.topic.properties.exclude=segment.bytes")
	p.start(topic)
	p.waitMirroring(topic, partitions, 30*time.Second)

	seg := fmt.Sprint(segmentBytes)
	resp, err := p.dst.admin(t).AlterTopicConfigs(p.ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.bytes", Value: &seg}}, topic)
	if err == nil {
		_, err = resp.On(topic, func(r *kadm.AlterConfigsResponse) error { return r.Err })
	}
	if err != nil {
		t.Fatalf("destination: set segment.bytes=%d on %s: %v", segmentBytes, topic, err)
	}

	// About 80 KB per partition in 4 KB batches, mirrored in large sets.
	const records, perBatch = 1000, 50
	p.pause(topic)
	p.waitState(topic, "PAUSED", partitions, 30*time.Second)
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, topic, part, 0, records, perBatch, "small-seg")
	}
	p.resume(topic)
	p.waitMirroring(topic, partitions, 60*time.Second)
	r := p.checkIdentity(topic, partitions*records)
	if r.Batches < partitions*records/perBatch {
		t.Fatalf("compared %d batches, want %d", r.Batches, partitions*records/perBatch)
	}

	// One batch of about 12 KB on partition 0: no 8 KB segment holds it.
	produceBatches(t, p, p.src, topic, 0, records, 150, 150, "too-big")
	var td adminTopic
	p.waitFor(30*time.Second, "partition 0 FAILED with RECORD_LIST_TOO_LARGE", func() string {
		var err error
		if td, err = p.describe(topic); err != nil {
			return err.Error()
		}
		if len(td.Partitions) != partitions || td.Partitions[0].State != "FAILED" || !strings.Contains(td.Partitions[0].LastError, "RECORD_LIST_TOO_LARGE") {
			return formatPartitions(td)
		}
		return ""
	})
	p.logf("%s: %s", topic, formatPartitions(td))
	// FAILED is retried (PREPARING again, which with no LME re-copies
	// from the source's log start), and fails at the same batch: the
	// destination never passes it.
	if end, pd := p.dst.endOffsets(t, p.ctx, topic)[0], td.Partitions[0]; end > records || !strings.Contains(pd.LastError, "segment size of 8192") {
		t.Errorf("partition 0: destination high watermark %d (want at most %d: nothing of the batch appended), error %q", end, records, pd.LastError)
	}
	produceBatches(t, p, p.src, topic, 1, records, 100, perBatch, "after")
	p.waitFor(30*time.Second, "partition 1 to mirror on", func() string {
		td, err := p.describe(topic)
		if err != nil {
			return err.Error()
		}
		if pd := td.Partitions[1]; pd.State != "MIRRORING" || pd.DestinationLogEndOffset != records+100 {
			return formatPartitions(td)
		}
		return ""
	})
}
