package mirrorit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin/cli"
)

// TestMirrorRetentionSkipFails is issue 27's loud failure for a retention
// skip: the source deletes records the mirror has not copied yet (its log
// start passes the destination's log end while the topic is PAUSED;
// DeleteRecords moves the log start exactly as retention does, without
// waiting for a segment roll and a retention pass). On resume every
// partition must go FAILED with a last error naming the source's log
// start, the destination's end and the offsets lost, in describe's text
// and --json, with a WARN line in the broker log; nothing is skipped
// (offsets_skipped 0, the metric 0) and nothing is appended (the
// destination's end offsets stay where they were).
func TestMirrorRetentionSkipFails(t *testing.T) {
	t.Parallel()
	// A FAILED partition retries (mirror.failed.retry.*, 100 ms at
	// first): keep it FAILED for the test's time, so that describe,
	// read after the wait for FAILED, does not catch the retry's
	// PREPARING (it did once, in a clean make test).
	dst := startOne(t, "destination", brokertest.WithMetrics(),
		brokertest.WithConfig("mirror.failed.retry.initial.backoff.ms=60000", "mirror.failed.retry.max.backoff.ms=60000"))
	p := newPair(t, 90*time.Second, startOne(t, "source"), dst)
	const topic, partitions, mirrored, perBatch = "expired", 2, 100, 10
	deleteTo := map[int32]int64{0: 150, 1: 170}
	p.src.createTopic(t, p.ctx, topic, partitions)
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, topic, part, 0, mirrored, perBatch, "before")
	}
	p.createMirror()
	p.start(topic)
	p.waitMirroring(topic, partitions, 30*time.Second)
	p.pause(topic)
	p.waitState(topic, "PAUSED", partitions, 30*time.Second)
	destEnds := p.dst.endOffsets(t, p.ctx, topic)
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, topic, part, mirrored, 100, perBatch, "after")
	}
	var os kadm.Offsets
	for part, k := range deleteTo {
		os.Add(kadm.Offset{Topic: topic, Partition: part, At: k, LeaderEpoch: -1})
	}
	if dr, err := p.src.admin(t).DeleteRecords(p.ctx, os); err != nil || dr.Error() != nil {
		t.Fatalf("delete records on the source: %v %v", err, dr.Error())
	}
	p.logf("source log start offsets now %v; destination end offsets %v", deleteTo, destEnds)

	p.resume(topic)
	reason := func(part int32) string {
		return fmt.Sprintf("starts at offset %d, past the destination's log end %d; offsets %d to %d are lost",
			deleteTo[part], destEnds[part], destEnds[part], deleteTo[part]-1)
	}
	td := p.waitFor2(topic, func(states map[int32]string) bool {
		for part := range int32(partitions) {
			if states[part] != "FAILED" {
				return false
			}
		}
		return true
	})
	for _, pd := range td.Partitions {
		if !strings.Contains(pd.LastError, "source deleted records before they were mirrored") || !strings.Contains(pd.LastError, reason(pd.Partition)) {
			t.Errorf("p%d: last error %q does not give the reason %q", pd.Partition, pd.LastError, reason(pd.Partition))
		}
		if pd.OffsetsSkipped != 0 {
			t.Errorf("p%d: %d offsets skipped, want none", pd.Partition, pd.OffsetsSkipped)
		}
	}
	// describe, text and --json.
	var out, errb bytes.Buffer
	if code := cli.Main(p.ctx, []string{"--bootstrap-server", p.dst.seeds()[0], "describe", mirrorName}, &out, &errb); code != 0 ||
		strings.Count(out.String(), "source deleted records before they were mirrored") != partitions {
		t.Errorf("strait mirror describe: exit %d, want the reason on each partition\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := cli.Main(p.ctx, []string{"--bootstrap-server", p.dst.seeds()[0], "describe", mirrorName, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("strait mirror describe --json: exit %d\n%s", code, errb.String())
	}
	var js struct {
		Topics []struct {
			Partitions []struct {
				Partition int32  `json:"partition"`
				State     string `json:"state"`
				LastError string `json:"last_error"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	if err := json.Unmarshal(out.Bytes(), &js); err != nil || len(js.Topics) != 1 {
		t.Fatalf("describe --json: %v\n%s", err, out.String())
	}
	for _, pd := range js.Topics[0].Partitions {
		if pd.State != "FAILED" || !strings.Contains(pd.LastError, reason(pd.Partition)) {
			t.Errorf("describe --json p%d: %s %q", pd.Partition, pd.State, pd.LastError)
		}
	}
	logs := dst.one.Logs()
	for part := range int32(partitions) {
		found := false
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, "level=WARN") && strings.Contains(line, fmt.Sprintf("%s-%d", topic, part)) && strings.Contains(line, reason(part)) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("p%d: no WARN log line gives the reason", part)
		}
	}
	if got := mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())["strait_mirror_offsets_skipped_total"]; got != 0 {
		t.Errorf("strait_mirror_offsets_skipped_total %v, want 0", got)
	}
	if after := p.dst.endOffsets(t, p.ctx, topic); fmt.Sprint(after) != fmt.Sprint(destEnds) {
		t.Errorf("destination end offsets %v after the failure, want %v (nothing skipped or appended)", after, destEnds)
	}
}
