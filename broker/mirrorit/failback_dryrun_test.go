package mirrorit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/mirror/admin/cli"
	"github.com/strait-io/strait/storage/record"
)

// TestMirrorFailbackDryRun: the failback of TestMirrorFailback, preceded by
// a dry run (`strait mirror start --dry-run --export-truncated`). A→B
// mirror, stop on B (failover), then writes on both so they diverge. The
// dry-run start on A (mirror A←B) must change nothing and report, per
// partition, the divergence point (the stop point: the end of the last
// mirrored epoch) and A's divergent offsets; the batches read and exported
// for it must be, byte for byte, the ones the real failback that follows
// truncates: A's batches before the failback from the first one it no
// longer holds on. The real failback is `strait mirror start
// --export-truncated DIR`, whose own export must hold the same bytes.
func TestMirrorFailbackDryRun(t *testing.T) {
	t.Parallel()
	testMirrorFailbackDryRun(t, oneAndOne)
}

// TestMirrorFailbackDryRun3x3 is TestMirrorFailbackDryRun with three-node
// clusters: the partitions' leaders are spread, so the dry run asks each
// divergence point of another broker than the one it asked. Not parallel
// (see threeAndThree).
func TestMirrorFailbackDryRun3x3(t *testing.T) {
	testMirrorFailbackDryRun(t, threeAndThree)
}

func testMirrorFailbackDryRun(t *testing.T, sh shape) {
	a, b := sh.start(t, "A"), sh.start(t, "B")
	ab := newPair(t, 3*time.Minute, a, b)
	const topic, partitions = "fbdry", 3
	a.createTopic(t, ab.ctx, topic, partitions)
	produceMix(t, ab.ctx, a, topic, partitions, 200, producerKinds()[:3])
	ab.createMirror()
	ab.start(topic)
	ab.waitMirroring(topic, partitions, time.Minute)
	ab.stop(topic)
	ab.waitState(topic, "STOPPED", partitions, 30*time.Second)
	stopAt := a.endOffsets(t, ab.ctx, topic)

	// Diverge: B takes writes as the new primary, A as if it had kept
	// accepting them (idempotent batches, then a committed transaction:
	// data batches and COMMIT markers); A's partition 2 takes none
	// (nothing to truncate).
	writeEach(t, ab, b, topic, partitions, 40, "on-B")
	writeEach(t, ab, a, topic, partitions-1, 30, "divergent-on-A")
	writeCommitted(t, ab, a, topic, partitions-1, 25, "divergent-on-A-in-a-transaction")
	// EndTransaction returns before the COMMIT markers are in: wait for
	// them (30 + 25 records and a marker on each divergent partition).
	var aEnd map[int32]int64
	ab.waitFor(30*time.Second, "A's COMMIT markers", func() string {
		aEnd = a.endOffsets(t, ab.ctx, topic)
		for p := range int32(partitions - 1) {
			if aEnd[p] != stopAt[p]+30+25+1 {
				return fmt.Sprintf("A ends at %v, stop point %v", aEnd, stopAt)
			}
		}
		return ""
	})
	aBefore := readTopic(t, ab.ctx, a, topic)

	ba := newPair(t, 2*time.Minute, b, a)
	ba.createMirror()
	// The dry run, as an operator runs it: `strait mirror start --dry-run
	// --export-truncated DIR --json` against A.
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"--bootstrap-server", strings.Join(a.seeds(), ","), "start", mirrorName, "--topic", topic,
		"--dry-run", "--export-truncated", dir, "--json"}
	if code := cli.Main(ba.ctx, args, &stdout, &stderr); code != 0 {
		t.Fatalf("strait mirror %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	var report cli.PreviewReport
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("dry-run --json: %v\n%s", err, stdout.String())
	}
	plan := map[int32]cli.PreviewPartition{}
	for _, pp := range report.Partitions {
		plan[pp.Partition] = pp
	}
	exported := map[int32][]byte{}
	for p := range int32(partitions) {
		pp, ok := plan[p]
		if !ok {
			t.Errorf("p%d: no dry-run answer:\n%s", p, stdout.String())
			continue
		}
		// The walk's divergence point is the stop point; A's own writes
		// after it are what would go.
		if pp.DivergenceOffset != stopAt[p] || pp.LogEndOffset != aEnd[p] || pp.LastMirroredEpoch < 0 || pp.RefusedWithoutTruncateExisting ||
			pp.TruncatedOffsets != aEnd[p]-stopAt[p] || pp.Error != "" {
			t.Errorf("p%d: dry run %+v, want divergence at the stop point %d and log end %d", p, pp, stopAt[p], aEnd[p])
		}
		ba.logf("p%d: dry run LME %d, divergence %d, end %d: %d batches, %d records, offsets %d-%d, timestamps %d-%d, %d bytes in %q",
			p, pp.LastMirroredEpoch, pp.DivergenceOffset, pp.LogEndOffset, pp.Batches, pp.Records, pp.FirstOffset, pp.LastOffset,
			pp.FirstTimestamp, pp.LastTimestamp, pp.Bytes, pp.ExportFile)
		if pp.ExportFile == "" {
			continue
		}
		back, err := admin.ReadSegment(pp.ExportFile)
		if err != nil {
			t.Fatalf("p%d: reading the export back: %v", p, err)
		}
		exported[p] = joinBatches(back)
		if len(back) != pp.Batches || len(exported[p]) != pp.Bytes || back[0].BaseOffset() != pp.FirstOffset || back[len(back)-1].LastOffset() != pp.LastOffset ||
			back[0].BaseTimestamp() != pp.FirstTimestamp || back[len(back)-1].MaxTimestamp() != pp.LastTimestamp {
			t.Errorf("p%d: the export (%d batches, %d bytes) does not match the report %+v", p, len(back), len(exported[p]), pp)
		}
	}
	// The dry run changed nothing on A.
	if r := compareLogs(topic, aBefore, readTopic(t, ba.ctx, a, topic)); !r.OK() {
		t.Fatalf("the dry run changed A's log: %v", r)
	}

	// The real failback, with --export-truncated: the CLI exports again,
	// then starts.
	dir2 := t.TempDir()
	stdout.Reset()
	stderr.Reset()
	args = []string{"--bootstrap-server", strings.Join(a.seeds(), ","), "start", mirrorName, "--topic", topic, "--export-truncated", dir2}
	if code := cli.Main(ba.ctx, args, &stdout, &stderr); code != 0 {
		t.Fatalf("strait mirror %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	ba.logf("strait mirror %s:\n%s", strings.Join(args[2:], " "), stdout.String())
	ba.waitMirroring(topic, partitions, time.Minute)
	aAfter := readTopic(t, ba.ctx, a, topic)
	for p := range int32(partitions) {
		before, after := aBefore.partitions[p], aAfter.partitions[p]
		k := 0
		for k < len(before) && k < len(after) && bytes.Equal(before[k], after[k]) {
			k++
		}
		truncated := joinBatches(before[k:])
		at := aEnd[p]
		if k < len(before) {
			at = before[k].BaseOffset()
		}
		ba.logf("p%d: the failback truncated at %d: %d batches, %d bytes; exported %d bytes", p, at, len(before)-k, len(truncated), len(exported[p]))
		if at != plan[p].DivergenceOffset {
			t.Errorf("p%d: the failback truncated at %d, the dry run said %d", p, at, plan[p].DivergenceOffset)
		}
		var exported2 []byte
		if k < len(before) {
			back, err := admin.ReadSegment(admin.SegmentName(dir2, topic, p, at))
			if err != nil {
				t.Errorf("p%d: the start's own export: %v", p, err)
			}
			exported2 = joinBatches(back)
		}
		if !bytes.Equal(truncated, exported2) {
			t.Errorf("p%d: the failback truncated %d bytes; the start's --export-truncated holds %d bytes, not the same", p, len(truncated), len(exported2))
		}
		if !bytes.Equal(truncated, exported[p]) {
			t.Errorf("p%d: the failback truncated %d bytes (%d batches); the export holds %d bytes, not the same", p, len(truncated), len(before)-k, len(exported[p]))
		}
		if p == partitions-1 && len(truncated) != 0 {
			t.Errorf("p%d took no divergent writes, yet %d bytes went", p, len(truncated))
		}
		if p < partitions-1 && len(truncated) == 0 {
			t.Errorf("p%d: nothing truncated, want A's divergent writes gone", p)
		}
	}
}

// writeCommitted writes perPartition records to each of the first
// partitions of topic on s in one committed transaction.
func writeCommitted(t *testing.T, p *pair, s *side, topic string, partitions int32, perPartition int, tag string) {
	t.Helper()
	cl := s.client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID("dryrun-"+tag))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range int(partitions) * perPartition {
		recs = append(recs, &kgo.Record{Partition: int32(i) % partitions, Value: recordValue(tag, i)})
	}
	if err := cl.ProduceSync(p.ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("%s: writing %s: %v", s.name, tag, err)
	}
	if err := cl.EndTransaction(p.ctx, kgo.TryCommit); err != nil {
		t.Fatalf("%s: committing %s: %v", s.name, tag, err)
	}
}

func joinBatches(bs []record.Batch) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}
