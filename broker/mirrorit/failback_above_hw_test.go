package mirrorit

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin/cli"
)

// TestMirrorFailbackDryRunAboveHighWatermark: the failback's destination
// A (three nodes) holds divergent records past the stop point, the last
// of them above the high watermark (acks=1 writes after a follower died,
// still in the ISR). The failback's truncation finds the divergence point
// from the log end, as Kafka's does, so those records go too; no client
// can read them. The dry run counts them (above_high_watermark_offsets,
// a warning), shows the records below the high watermark and exits 0;
// with --export-truncated (dry run or not) it refuses, exports nothing
// and starts nothing. Once the follower is back, the failback truncates
// every divergent offset: A is B's copy again. Before, the dry run failed
// reading them ("offsets above the high watermark are not readable").
// Not parallel (see threeAndThree).
func TestMirrorFailbackDryRunAboveHighWatermark(t *testing.T) {
	// The dead follower stays in the ISR (and its broker registered)
	// for the whole test: the high watermark stays below the log end.
	a := startThree(t, "A", brokertest.WithConfig("replica.lag.time.max.ms=120000", "broker.session.timeout.ms=120000"))
	b := startOne(t, "B")
	ab := newPair(t, 3*time.Minute, a, b)
	const topic, divergent, above = "fb-above-hw", 10, 2
	a.createTopic(t, ab.ctx, topic, 1)
	produceBatches(t, ab, a, topic, 0, 0, 20, 5, "mirrored")
	ab.createMirror()
	ab.start(topic)
	ab.waitMirroring(topic, 1, time.Minute)
	ab.stop(topic)
	ab.waitState(topic, "STOPPED", 1, 30*time.Second)
	stopAt := a.endOffsets(t, ab.ctx, topic)[0]
	produceBatches(t, ab, a, topic, 0, stopAt, divergent, 5, "divergent")

	leader, ctrl := a.leader(topic, 0), a.many.Controller()
	dead := int32(1)
	for dead == leader || dead == ctrl {
		dead++
	}
	a.many.Kill(t, dead)
	cl := a.client(t, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range above {
		if err := cl.ProduceSync(ab.ctx, &kgo.Record{Value: recordValue("above-hw", i)}).FirstErr(); err != nil {
			t.Fatalf("acks=1 produce: %v", err)
		}
	}
	if hw := a.endOffsets(t, ab.ctx, topic)[0]; hw != stopAt+divergent {
		t.Fatalf("A's high watermark %d, want %d (the acks=1 records above it)", hw, stopAt+divergent)
	}

	ba := newPair(t, 2*time.Minute, b, a)
	ba.createMirror()
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		all := append([]string{"--bootstrap-server", strings.Join(a.seeds(), ","), "start", mirrorName, "--topic", topic}, args...)
		code := cli.Main(ba.ctx, all, &stdout, &stderr)
		ba.logf("strait mirror start %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		return code, stdout.String(), stderr.String()
	}
	code, stdout, _ := run("--dry-run", "--json")
	var report cli.PreviewReport
	if err := json.Unmarshal([]byte(stdout), &report); err != nil || code != 0 || len(report.Partitions) != 1 {
		t.Fatalf("dry run: exit %d, %v", code, err)
	}
	p := report.Partitions[0]
	if p.DivergenceOffset != stopAt || p.LogEndOffset != stopAt+divergent+above || p.TruncatedOffsets != divergent+above ||
		p.HighWatermark != stopAt+divergent || p.AboveHighWatermark != above || p.Records != divergent ||
		p.LastOffset != stopAt+divergent-1 || p.Error != "" || !strings.Contains(p.Warning, "above the high watermark") {
		t.Errorf("dry run %+v; want divergence %d, log end %d, high watermark %d, %d offsets above it, %d records read",
			p, stopAt, stopAt+divergent+above, stopAt+divergent, above, divergent)
	}
	code, stdout, _ = run("--dry-run")
	if code != 0 || !strings.Contains(stdout, "are above the high watermark") {
		t.Errorf("dry run (text): exit %d, want 0 and the warning", code)
	}

	dir := t.TempDir()
	if code, _, stderr := run("--dry-run", "--export-truncated", dir); code != 1 || !strings.Contains(stderr, "cannot copy the 2 offsets above the high watermark") {
		t.Errorf("dry run --export-truncated: exit %d, want 1 refusing the offsets above the high watermark", code)
	}
	if code, _, stderr := run("--export-truncated", dir); code != 1 || !strings.Contains(stderr, "not started") {
		t.Errorf("start --export-truncated: exit %d, want 1, not started", code)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("the refused exports wrote %d entries in %s", len(files), dir)
	}
	if _, err := ba.describe(topic); err == nil {
		t.Fatalf("the refused start started mirroring %s", topic)
	}

	// The follower back, the failback truncates through the log end.
	a.many.Restart(t, dead)
	ba.start(topic)
	ba.waitMirroring(topic, 1, time.Minute)
	ba.checkIdentity(topic, stopAt)
}
