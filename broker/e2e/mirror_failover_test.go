package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/mirrorit"
	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/mirror/admin/cli"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/storage/record"
)

// failoverClusters are the clusters of TestMirrorFailoverThroughTheBinary:
// a single-node source S and a three-node destination D (RF 1, so a killed
// node takes its partitions down with it), both `strait serve` processes,
// and the mirrors between them that its subtests share. Each subtest owns
// its mirror and topic, so they do not interfere; the one that kills a
// destination node runs last.
type failoverClusters struct {
	src       *node
	dst       []*clusterNode
	dstAddrs  string // every destination node, comma-separated: for the CLI
	dstAddr   string // the first destination node: a client's seed
	srcCLI    func(want int, args ...string) string
	dstCLI    func(want int, args ...string) string
	dstMirror *admin.Client // in-process, for the waits between commands
}

// The mirrors on D and their topics on S (partitions, records written
// before the mirror starts).
var failoverMirrors = []struct {
	mirror  string
	topics  []string
	configs []string
}{
	{"all", []string{"txn", "behind"}, nil},
	{"rpo", []string{"lagging"}, []string{"mirror.failover.max.lag.ms=1000"}},
	{"grp", []string{"grp-t"}, []string{"mirror.consumer.offsets.sync.active.groups=forward-only",
		"mirror.metadata.refresh.interval.ms=300", "mirror.groups.include=busy"}},
	{"fb", []string{"fb"}, nil},
	{"closed", []string{"closed"}, nil},
}

const failoverPartitions = 2

func failoverTopicPartitions(topic string) int32 {
	if topic == "closed" {
		return 3 // spread over the three destination nodes
	}
	return failoverPartitions
}

// TestMirrorFailoverThroughTheBinary runs issue 27's mirror commands as an
// operator does, each `strait mirror ...` a separate process against
// binary clusters: the promotion barrier (`stop --all --json`, `stop
// --topic` in text) and its report; the RPO guard (--max-lag-records and
// the mirror config mirror.failover.max.lag.ms refuse, --force stops);
// the failback dry run and `start --export-truncated` on the old source;
// the forward-only sync of an active destination group and describe's
// list of what it skipped; and a stop that fails closed when a destination
// node holding a partition is killed.
func TestMirrorFailoverThroughTheBinary(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f := startFailoverClusters(t, ctx)

	t.Run("stop --all --json", func(t *testing.T) { f.stopAllJSON(t, ctx) })
	t.Run("stop --topic with the RPO guard", func(t *testing.T) { f.stopRPOGuard(t, ctx) })
	t.Run("forward-only active group sync", func(t *testing.T) { f.forwardOnlyGroups(t, ctx) })
	t.Run("failback dry run and --export-truncated", func(t *testing.T) { f.failback(t, ctx) })
	t.Run("stop fails closed", func(t *testing.T) { f.stopFailsClosed(t, ctx) }) // kills a node: last
}

func startFailoverClusters(t *testing.T, ctx context.Context) *failoverClusters {
	t.Helper()
	ps := freePorts(t, 4) // all at once: distinct
	f := &failoverClusters{src: newNodeOn(t, ps[0]), dst: newClusterNodesOn(t, ps[1:], "default.replication.factor=1", "min.insync.replicas=1")}
	for _, cn := range f.dst {
		cn.launch()
	}
	f.src.start()
	for _, cn := range f.dst {
		cn.awaitReady(60 * time.Second)
	}
	f.dstAddrs, f.dstAddr = strings.Join(clusterAddrs(f.dst), ","), f.dst[0].kafkaAddr()
	f.srcCLI, f.dstCLI = mirrorCLI(t, f.src.kafkaAddr()), mirrorCLI(t, f.dstAddrs)
	var err error
	if f.dstMirror, err = admin.NewClient(clusterAddrs(f.dst)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.dstMirror.Close)

	srcAdm := newAdmin(t, f.src.kafkaAddr())
	for _, m := range failoverMirrors {
		for _, topic := range m.topics {
			createTopic(t, srcAdm, topic, failoverTopicPartitions(topic))
			produceEach(t, ctx, f.src.kafkaAddr(), topic, failoverTopicPartitions(topic), 50, topic)
		}
	}
	// An open transaction on the source: the destination holds its
	// records at the stop, which must abort it.
	txn := newClient(t, f.src.kafkaAddr(), kgo.DefaultProduceTopic("txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID("left-open"), kgo.TransactionTimeout(5*time.Minute))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := range int32(failoverPartitions) {
		for i := range 5 {
			if err := txn.ProduceSync(ctx, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "open-%d-%d", p, i)}).FirstErr(); err != nil {
				t.Fatalf("open transaction: %v", err)
			}
		}
	}

	for _, m := range failoverMirrors {
		args := []string{"create", m.mirror, "--source-bootstrap", f.src.kafkaAddr()}
		for _, c := range m.configs {
			args = append(args, "--config", c)
		}
		f.dstCLI(0, args...)
		args = []string{"start", m.mirror}
		for _, topic := range m.topics {
			args = append(args, "--topic", topic)
		}
		f.dstCLI(0, args...)
	}
	for _, m := range failoverMirrors {
		for _, topic := range m.topics {
			ends := mirrorEnds(t, ctx, f.src.kafkaAddr(), topic)
			f.waitPartitions(t, ctx, m.mirror, topic, "MIRRORING at the source's end, lag 0", func(pd admin.PartitionDescription) bool {
				return pd.State == "MIRRORING" && pd.Lag == 0 && pd.DestinationHighWatermark == ends[pd.Partition]
			})
		}
	}
	return f
}

// waitPartitions waits until every partition of topic in mirror on D
// satisfies ok.
func (f *failoverClusters) waitPartitions(t *testing.T, ctx context.Context, mirror, topic, what string, ok func(admin.PartitionDescription) bool) {
	t.Helper()
	waitUntil(t, time.Minute, fmt.Sprintf("%s/%s: %s", mirror, topic, what), func() (bool, string) {
		td, err := describeTopic(ctx, f.dstMirror, mirror, topic)
		if err != nil {
			return false, err.Error()
		}
		if len(td.Partitions) != int(failoverTopicPartitions(topic)) {
			return false, fmt.Sprintf("%+v", td)
		}
		for _, pd := range td.Partitions {
			if !ok(pd) {
				return false, fmt.Sprintf("%+v", td.Partitions)
			}
		}
		return true, ""
	})
}

func describeTopic(ctx context.Context, adm *admin.Client, mirror, topic string) (admin.TopicDescription, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ds, err := adm.DescribeMirrors(ctx, mirror)
	if err != nil {
		return admin.TopicDescription{}, err
	}
	if ds[0].Err != nil {
		return admin.TopicDescription{}, ds[0].Err
	}
	for _, td := range ds[0].Topics {
		if td.Name == topic {
			return td, nil
		}
	}
	return admin.TopicDescription{}, fmt.Errorf("mirror %s has no topic %s", mirror, topic)
}

// produceEach writes n records to each partition of topic at addr with
// an idempotent producer (acks=all), values prefix-P-I.
func produceEach(t *testing.T, ctx context.Context, addr, topic string, partitions int32, n int, prefix string) {
	t.Helper()
	cl := newClient(t, addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := range partitions {
		for i := range n {
			recs = append(recs, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d", prefix, p, i)})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s at %s: %v", topic, addr, err)
	}
	cl.Close()
}

// stopAllJSON: `stop all --all --json` stops both topics of the mirror at
// one barrier. Topic txn is caught up and holds the records of a
// transaction still open on the source; topic behind is paused with 20
// records per partition more on the source. The report must give, per
// partition, the barrier (what was mirrored), the source HW, the lag
// abandoned (0, or exactly the 20), and HW = LSO past the barrier by the
// stop's own markers (ABORT for the open transaction, MIRROR_PID_RESET).
// Then the topics take writes at once, and a read_committed consumer
// reads to the end (not stuck), seeing no record of the open transaction.
func (f *failoverClusters) stopAllJSON(t *testing.T, ctx context.Context) {
	const extra = 20
	barrier := map[string]map[int32]int64{"txn": mirrorEnds(t, ctx, f.src.kafkaAddr(), "txn")}
	f.dstCLI(0, "pause", "all", "--topic", "behind")
	f.waitPartitions(t, ctx, "all", "behind", "PAUSED", func(pd admin.PartitionDescription) bool { return pd.State == "PAUSED" })
	barrier["behind"] = mirrorEnds(t, ctx, f.src.kafkaAddr(), "behind")
	produceEach(t, ctx, f.src.kafkaAddr(), "behind", failoverPartitions, extra, "unmirrored")
	source := map[string]map[int32]int64{}
	for _, topic := range []string{"txn", "behind"} {
		source[topic] = mirrorEnds(t, ctx, f.src.kafkaAddr(), topic)
	}

	out := f.dstCLI(0, "stop", "all", "--all", "--json")
	t.Logf("stop all --all --json:\n%s", out)
	var rep cli.StopReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stop --json printed %q: %v", out, err)
	}
	if rep.Mirror != "all" || !rep.BarrierReached || !rep.Stopped || rep.Error != "" || len(rep.Partitions) != 2*failoverPartitions {
		t.Fatalf("stop --all --json: %+v", rep)
	}
	for _, p := range rep.Partitions {
		name := fmt.Sprintf("%s-%d", p.Topic, p.Partition)
		b, src := barrier[p.Topic][p.Partition], source[p.Topic][p.Partition]
		markers := int64(1) // MIRROR_PID_RESET
		if p.Topic == "txn" {
			markers++ // the open transaction's ABORT
		}
		wantLag := src - b
		if p.State != "STOPPED" || p.Barrier != b || p.SourceHighWatermark != src || p.LagRecords != wantLag ||
			p.DestinationHighWatermark != b+markers || p.LastStableOffset != p.DestinationHighWatermark || p.LastMirrorEpoch < 0 || p.Error != "" {
			t.Errorf("%s: %+v; want STOPPED, barrier %d, source HW %d, lag abandoned %d, HW = LSO = %d", name, p, b, src, wantLag, b+markers)
		}
		if (wantLag == 0) != (p.LagMs == 0) || p.LagMs < 0 {
			t.Errorf("%s: lag abandoned %d records, %d ms", name, p.LagRecords, p.LagMs)
		}
	}

	// Writable at once; read_committed reads to the end.
	for _, topic := range []string{"txn", "behind"} {
		produceEach(t, ctx, f.dstAddr, topic, failoverPartitions, 1, "after-stop")
	}
	got := readCommittedUntil(t, ctx, f.dstAddr, "txn", failoverPartitions, "after-stop")
	lost, dups, open := 0, 0, 0
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
		if strings.HasPrefix(v, "open-") {
			open++
		}
	}
	for p := range int32(failoverPartitions) {
		for i := range 50 {
			switch seen[fmt.Sprintf("txn-%d-%d", p, i)] {
			case 0:
				lost++
			case 1:
			default:
				dups++
			}
		}
	}
	t.Logf("txn read_committed after the stop: %d records; lost %d, duplicated %d, open-transaction records visible %d", len(got), lost, dups, open)
	if lost != 0 || dups != 0 || open != 0 || len(got) != 2*(50+1) {
		t.Errorf("read_committed after the stop read %q", got)
	}
}

// readCommittedUntil consumes topic on addr from the start with
// read_committed until every partition has yielded a record whose value
// starts with last, and returns the values read.
func readCommittedUntil(t *testing.T, ctx context.Context, addr, topic string, partitions int32, last string) []string {
	t.Helper()
	from := map[int32]kgo.Offset{}
	for p := range partitions {
		from[p] = kgo.NewOffset().At(0)
	}
	cl := newClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out []string
	done := map[int32]bool{}
	for len(done) < int(partitions) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_committed %s: stuck, %d of %d partitions read to %q: %q", topic, len(done), partitions, last, out)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, string(r.Value))
			if strings.HasPrefix(string(r.Value), last) {
				done[r.Partition] = true
			}
		})
	}
	return out
}

// stopRPOGuard: mirror rpo has mirror.failover.max.lag.ms=1000 and its
// topic is paused with 30 records per partition unmirrored for over a
// second. describe shows the bound and both partitions over it; `stop
// --max-lag-records 5` is refused (exit 1) naming each partition with its
// lag and the bound, and so is a plain stop (the config's bound); the
// topic stays PAUSED. `stop --force` stops it, and its text report gives
// the barrier, the source HW and the 30 records abandoned.
func (f *failoverClusters) stopRPOGuard(t *testing.T, ctx context.Context) {
	const topic, behind = "lagging", 30
	f.dstCLI(0, "pause", "rpo", "--topic", topic)
	paused := func(pd admin.PartitionDescription) bool { return pd.State == "PAUSED" }
	f.waitPartitions(t, ctx, "rpo", topic, "PAUSED", paused)
	mirrored := mirrorEnds(t, ctx, f.src.kafkaAddr(), topic)
	written := time.Now()
	produceEach(t, ctx, f.src.kafkaAddr(), topic, failoverPartitions, behind, "unmirrored")
	source := mirrorEnds(t, ctx, f.src.kafkaAddr(), topic)
	time.Sleep(1500*time.Millisecond - time.Since(written)) // the oldest unmirrored record is over the 1000 ms bound

	desc := f.dstCLI(0, "describe", "rpo")
	if want := "Failover bound (mirror.failover.max.lag.ms): 1000 ms; partitions over it (a stop would be refused): 2 (lagging-0, lagging-1)"; !strings.Contains(desc, want) {
		t.Errorf("describe rpo printed:\n%s\nwant the line %q", desc, want)
	}

	var d admin.MirrorDescription
	if out := f.dstCLI(0, "describe", "rpo", "--json"); json.Unmarshal([]byte(out), &d) != nil || d.FailoverMaxLagMs == nil || *d.FailoverMaxLagMs != 1000 ||
		len(d.Topics) != 1 || !slices.EqualFunc(d.Topics[0].Partitions, []bool{true, true}, func(pd admin.PartitionDescription, over bool) bool { return pd.OverFailoverBound == over }) {
		t.Errorf("describe rpo --json printed %q; want failover_max_lag_ms 1000 and both partitions over_failover_bound", out)
	}
	// The metrics, summed over the destination's brokers (each counts the
	// partitions it leads), from the lag measured about every second.
	waitUntil(t, 10*time.Second, "the metrics to show both partitions over the bound", func() (bool, string) {
		var over, bound float64
		for _, cn := range f.dst {
			v, _, err := scrapeMetric(cn.ports.metrics, `strait_mirror_failover_lag_bound_exceeded{mirror="rpo"}`)
			b, _, err2 := scrapeMetric(cn.ports.metrics, `strait_mirror_failover_max_lag_ms{mirror="rpo"}`)
			if err != nil || err2 != nil {
				return false, fmt.Sprint(err, err2)
			}
			over, bound = over+v, max(bound, b)
		}
		return over == failoverPartitions && bound == 1000, fmt.Sprintf("exceeded %v, bound %v", over, bound)
	})

	refused := func(args []string, bound string) {
		t.Helper()
		code, stdout, stderr := runMirror(t, f.dstAddrs, args...)
		t.Logf("strait mirror %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		if code != 1 || !strings.Contains(stderr, "POLICY_VIOLATION") || !strings.Contains(stderr, "stay paused") {
			t.Errorf("%v: exit %d, stderr %q; want 1, POLICY_VIOLATION, the topic left paused", args, code, stderr)
		}
		for p := range int32(failoverPartitions) {
			want := fmt.Sprintf("%s partition %d: lag %d records, ", topic, p, behind)
			line := lineWith(stderr, want)
			if line == "" || !strings.HasSuffix(line, "; bound "+bound) {
				t.Errorf("%v: stderr names partition %d as %q; want %q... ending \"; bound %s\"", args, p, line, want, bound)
			}
		}
		f.waitPartitions(t, ctx, "rpo", topic, "still PAUSED after the refusal", paused)
	}
	refused([]string{"stop", "rpo", "--topic", topic, "--max-lag-records", "5"}, "5 records, 1000 ms")
	refused([]string{"stop", "rpo", "--topic", topic}, "1000 ms")

	out := f.dstCLI(0, "stop", "rpo", "--topic", topic, "--force")
	t.Logf("stop --force:\n%s", out)
	rows := tableRows(out, "TOPIC")
	if len(rows) != failoverPartitions || !strings.Contains(out, fmt.Sprintf("Stopped %d partitions of mirror rpo at one barrier; they are writable.", failoverPartitions)) {
		t.Fatalf("stop --force printed %q", out)
	}
	for _, r := range rows {
		p, _ := strconv.Atoi(r["PARTITION"])
		b := mirrored[int32(p)]
		lagMs, _ := strconv.ParseInt(r["LAG-MS"], 10, 64)
		if r["TOPIC"] != topic || r["STATE"] != "STOPPED" || r["BARRIER"] != fmt.Sprint(b) || r["SOURCE-HW"] != fmt.Sprint(source[int32(p)]) ||
			r["LAG-ABANDONED"] != fmt.Sprint(behind) || lagMs < 1000 || r["DEST-HW"] != fmt.Sprint(b+1) || r["LSO"] != r["DEST-HW"] || r["ERROR"] != "-" {
			t.Errorf("partition %d: %v; want STOPPED, barrier %d, source HW %d, %d records over 1000 ms abandoned, HW = LSO = %d",
				p, r, b, source[int32(p)], behind, b+1)
		}
	}
}

// lineWith is the first line of s containing sub, trimmed, "" if none.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// tableRows parses the rows of the table in out whose header line starts
// with first, each a map from column name to value (columns split on
// spaces: no value holds one), up to the first line that does not have
// as many fields as the header.
func tableRows(out, first string) []map[string]string {
	var header []string
	var rows []map[string]string
	for _, l := range strings.Split(out, "\n") {
		fs := strings.Fields(l)
		switch {
		case header == nil:
			if len(fs) > 0 && fs[0] == first {
				header = fs
			}
		case len(fs) != len(header):
			return rows
		default:
			r := map[string]string{}
			for i, h := range header {
				r[h] = fs[i]
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// forwardOnlyGroups: mirror grp is created through the binary with
// mirror.consumer.offsets.sync.active.groups=forward-only. Group busy has
// a member on the destination that committed 10 (p0) and 40 (p1); the
// source's busy committed 30 and 20. The sync moves p0 forward to 30
// while the member stays, leaves p1 at the member's 40, and describe
// (text and --json) lists p1 as skipped: destination-ahead, 40 against
// 20.
func (f *failoverClusters) forwardOnlyGroups(t *testing.T, ctx context.Context) {
	const topic, group = "grp-t", "busy"
	member := newClient(t, f.dstAddr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	pollCtx, stopPolling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for pollCtx.Err() == nil {
			member.PollFetches(pollCtx)
		}
	})
	defer func() { stopPolling(); wg.Wait() }()
	dstAdm := kadm.NewClient(f.dstMirror.Kgo())
	waitUntil(t, 30*time.Second, group+" Stable on the destination", func() (bool, string) {
		ds, err := dstAdm.DescribeGroups(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		d := ds[group]
		return d.State == "Stable" && len(d.Members) == 1, fmt.Sprintf("state %q, %d members", d.State, len(d.Members))
	})
	if err := mirrorit.MemberCommit(ctx, member, map[string]map[int32]kgo.EpochOffset{topic: {0: {Epoch: -1, Offset: 10}, 1: {Epoch: -1, Offset: 40}}}); err != nil {
		t.Fatalf("the member's commit: %v", err)
	}
	var srcOffsets kadm.Offsets
	srcOffsets.Add(kadm.Offset{Topic: topic, Partition: 0, At: 30, LeaderEpoch: -1})
	srcOffsets.Add(kadm.Offset{Topic: topic, Partition: 1, At: 20, LeaderEpoch: -1})
	if resp, err := newAdmin(t, f.src.kafkaAddr()).CommitOffsets(ctx, group, srcOffsets); err != nil || resp.Error() != nil {
		t.Fatalf("commit on the source: %v %v", err, resp.Error())
	}

	waitUntil(t, 30*time.Second, "p0 synced forward to 30, p1 left at the member's 40", func() (bool, string) {
		os, err := dstAdm.FetchOffsets(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		o0, _ := os.Lookup(topic, 0)
		o1, _ := os.Lookup(topic, 1)
		return o0.At == 30 && o1.At == 40, fmt.Sprintf("committed %d, %d", o0.At, o1.At)
	})
	var desc string
	waitUntil(t, 30*time.Second, "describe grp to list p1 as destination-ahead", func() (bool, string) {
		desc = f.dstCLI(0, "describe", "grp")
		rows := tableRows(desc, "GROUP")
		want := map[string]string{"GROUP": group, "TOPIC": topic, "PARTITION": "1", "REASON": "destination-ahead", "DEST-COMMITTED": "40", "SOURCE": "20"}
		return strings.Contains(desc, "Group offsets not synced in the last round: 1\n") && len(rows) == 1 && fmt.Sprint(rows[0]) == fmt.Sprint(want), desc
	})
	t.Logf("describe grp:\n%s", desc)
	var d admin.MirrorDescription
	if out := f.dstCLI(0, "describe", "grp", "--json"); json.Unmarshal([]byte(out), &d) != nil {
		t.Fatalf("describe --json printed %q", out)
	}
	want := []admin.SkippedGroupOffset{{Group: group, Topic: topic, Partition: 1, Reason: "destination-ahead", Committed: 40, Source: 20}}
	if !slices.Equal(d.SkippedGroupOffsets, want) {
		t.Errorf("describe --json skipped_group_offsets %+v, want %+v", d.SkippedGroupOffsets, want)
	}
	// The member still owns the group: its own commits go in.
	if err := mirrorit.MemberCommit(ctx, member, map[string]map[int32]kgo.EpochOffset{topic: {0: {Epoch: -1, Offset: 31}}}); err != nil {
		t.Errorf("the member's commit after the sync: %v", err)
	}
}

// failback: topic fb was mirrored S→D and stopped on D (failover); then
// both took writes: D as the new primary, S (the old source) on
// partition 0 only, idempotent records and a committed transaction. On
// S, mirror back (D→S): `start --topic fb --dry-run --json
// --export-truncated DIR` must change nothing and report S's divergent
// records on p0 (from the stop point) and nothing on p1; `start
// --export-truncated DIR2` then fails back. What the start truncated (S's
// batches before it, from the first one gone, read with raw fetches) must
// start at the dry run's divergence point and equal, byte for byte, both
// exported .log files; afterwards S holds D's records.
func (f *failoverClusters) failback(t *testing.T, ctx context.Context) {
	const topic = "fb"
	f.dstCLI(0, "stop", "fb", "--topic", topic)
	stopAt := mirrorEnds(t, ctx, f.src.kafkaAddr(), topic)
	produceEach(t, ctx, f.dstAddr, topic, failoverPartitions, 20, "on-D")
	produceEach(t, ctx, f.src.kafkaAddr(), topic, 1, 15, "divergent-on-S")
	txn := newClient(t, f.src.kafkaAddr(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID("divergent"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := txn.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, "divergent-txn-%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	var sEnd map[int32]int64
	waitUntil(t, 10*time.Second, "S's COMMIT marker", func() (bool, string) {
		sEnd = mirrorEnds(t, ctx, f.src.kafkaAddr(), topic)
		return sEnd[0] == stopAt[0]+15+10+1 && sEnd[1] == stopAt[1], fmt.Sprintf("S ends at %v, stopped at %v", sEnd, stopAt)
	})
	_, before := rawBatches(t, ctx, f.src.kafkaAddr(), topic)

	f.srcCLI(0, "create", "back", "--source-bootstrap", f.dstAddrs)
	dir := t.TempDir()
	out := f.srcCLI(0, "start", "back", "--topic", topic, "--dry-run", "--json", "--export-truncated", dir)
	t.Logf("start --dry-run --json:\n%s", out)
	var report cli.PreviewReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("start --dry-run --json printed %q: %v", out, err)
	}
	plan := map[int32]cli.PreviewPartition{}
	for _, pp := range report.Partitions {
		plan[pp.Partition] = pp
	}
	if !report.DryRun || len(plan) != failoverPartitions {
		t.Fatalf("dry run: %+v", report)
	}
	for p := range int32(failoverPartitions) {
		pp := plan[p]
		if pp.Topic != topic || pp.DivergenceOffset != stopAt[p] || pp.LogEndOffset != sEnd[p] || pp.TruncatedOffsets != sEnd[p]-stopAt[p] ||
			pp.LastMirroredEpoch < 0 || pp.RefusedWithoutTruncateExisting || pp.Error != "" || (p == 1) != (pp.ExportFile == "") {
			t.Errorf("p%d: dry run %+v; want divergence at the stop point %d, log end %d, an export only for p0", p, pp, stopAt[p], sEnd[p])
		}
	}
	_, afterDryRun := rawBatches(t, ctx, f.src.kafkaAddr(), topic)
	for p := range int32(failoverPartitions) {
		if !bytes.Equal(joinBatches(before[p]), joinBatches(afterDryRun[p])) {
			t.Fatalf("p%d: the dry run changed S's log", p)
		}
	}

	dir2 := t.TempDir()
	out = f.srcCLI(0, "start", "back", "--topic", topic, "--export-truncated", dir2)
	t.Logf("start --export-truncated:\n%s", out)
	dEnd := mirrorEnds(t, ctx, f.dstAddr, topic)
	srcMirror, err := admin.NewClient([]string{f.src.kafkaAddr()})
	if err != nil {
		t.Fatal(err)
	}
	defer srcMirror.Close()
	waitUntil(t, time.Minute, "S mirroring fb back from D to its end", func() (bool, string) {
		td, err := describeTopic(ctx, srcMirror, "back", topic)
		if err != nil || len(td.Partitions) != failoverPartitions {
			return false, fmt.Sprintf("%+v %v", td, err)
		}
		for _, pd := range td.Partitions {
			if pd.State != "MIRRORING" || pd.DestinationHighWatermark != dEnd[pd.Partition] {
				return false, fmt.Sprintf("%+v", td.Partitions)
			}
		}
		return true, ""
	})
	_, after := rawBatches(t, ctx, f.src.kafkaAddr(), topic)
	for p := range int32(failoverPartitions) {
		b, a := before[p], after[p]
		k := 0
		for k < len(b) && k < len(a) && bytes.Equal(b[k], a[k]) {
			k++
		}
		at := sEnd[p]
		if k < len(b) {
			at = b[k].BaseOffset()
		}
		truncated := joinBatches(b[k:])
		t.Logf("p%d: the start truncated at %d: %d batches, %d bytes; the dry run said divergence %d, %d batches, %d records, %d bytes",
			p, at, len(b)-k, len(truncated), plan[p].DivergenceOffset, plan[p].Batches, plan[p].Records, plan[p].Bytes)
		if at != plan[p].DivergenceOffset || len(b)-k != plan[p].Batches || len(truncated) != plan[p].Bytes {
			t.Errorf("p%d: the start truncated %d batches (%d bytes) at %d; the dry run said %d batches (%d bytes) at %d",
				p, len(b)-k, len(truncated), at, plan[p].Batches, plan[p].Bytes, plan[p].DivergenceOffset)
		}
		if p == 1 {
			if len(truncated) != 0 {
				t.Errorf("p1 took no divergent writes, yet %d bytes went", len(truncated))
			}
			for _, d := range []string{dir, dir2} {
				if _, err := os.Stat(filepath.Join(d, fmt.Sprintf("%s-%d", topic, p))); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("p1: an export in %s (%v), with nothing to truncate", d, err)
				}
			}
			continue
		}
		if len(truncated) == 0 {
			t.Fatalf("p0: nothing truncated, want S's divergent writes gone")
		}
		for _, file := range []string{plan[p].ExportFile, admin.SegmentName(dir2, topic, p, at)} {
			exported, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("p0: reading the export: %v", err)
			}
			if !bytes.Equal(exported, truncated) {
				t.Errorf("p0: %s holds %d bytes, not the %d bytes the start truncated", file, len(exported), len(truncated))
			}
			checkSegment(t, file, plan[p])
		}
	}
	var dValues, sValues []string
	for _, side := range []struct {
		addr   string
		values *[]string
	}{{f.dstAddr, &dValues}, {f.src.kafkaAddr(), &sValues}} {
		recs, _ := readAll(t, side.addr, topic)
		for _, r := range recs {
			*side.values = append(*side.values, fmt.Sprintf("%d:%d:%s", r.partition, r.offset, r.value))
		}
		slices.Sort(*side.values)
	}
	if !slices.Equal(dValues, sValues) {
		t.Errorf("after the failback S holds %d records, D %d: not the same", len(sValues), len(dValues))
	}
}

// checkSegment reads an exported .log file as Kafka record batches and
// checks them against the dry run's report of the partition.
func checkSegment(t *testing.T, file string, pp cli.PreviewPartition) {
	t.Helper()
	batches, err := admin.ReadSegment(file)
	if err != nil || len(batches) == 0 {
		t.Errorf("%s: %d batches, %v", file, len(batches), err)
		return
	}
	var records int64 // of the data batches, as the report counts them
	for _, b := range batches {
		if !b.ValidCRC() {
			t.Errorf("%s: the batch at %d fails its CRC", file, b.BaseOffset())
		}
		if !b.IsControl() {
			records += int64(b.RecordCount())
		}
	}
	first, last := batches[0], batches[len(batches)-1]
	if len(batches) != pp.Batches || records != pp.Records || first.BaseOffset() != pp.FirstOffset || last.LastOffset() != pp.LastOffset ||
		first.BaseTimestamp() != pp.FirstTimestamp || last.MaxTimestamp() != pp.LastTimestamp {
		t.Errorf("%s: %d batches, %d records, offsets %d-%d, timestamps %d-%d; the dry run reported %+v", file, len(batches), records,
			first.BaseOffset(), last.LastOffset(), first.BaseTimestamp(), last.MaxTimestamp(), pp)
	}
}

func joinBatches(bs []record.Batch) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// stopFailsClosed: a destination node that is the only replica of a
// partition of topic closed is killed; `stop closed --topic closed --json`
// must fail closed: exit 1 naming the partition, barrier_reached false,
// and nothing writable afterwards: no partition STOPPED or STOPPING, the
// live ones refusing produces with READ_ONLY_TOPIC. (They may not have
// reached PAUSED: the pause writes __mirror_state with acks from its ISR,
// which holds the dead node until replica.lag.time.max.ms passes.)
func (f *failoverClusters) stopFailsClosed(t *testing.T, ctx context.Context) {
	const topic = "closed"
	md, err := newAdmin(t, f.dstAddr).Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]int32{}
	for _, p := range md.Topics[topic].Partitions {
		leaders[p.Partition] = p.Leader
	}
	// A node leading a partition of the topic, not the controller if
	// another leads one (a controller move only slows the test down).
	victim := int32(-1)
	for _, l := range leaders {
		if l < 0 {
			continue
		}
		if victim < 0 || victim == md.Controller || l != md.Controller && l < victim {
			victim = l
		}
	}
	if victim < 0 {
		t.Fatalf("no leader of %s in %+v", topic, md.Topics[topic])
	}
	var down []string
	for p, l := range leaders {
		if l == victim {
			down = append(down, fmt.Sprintf("%s-%d", topic, p))
		}
	}
	var live []string
	for _, cn := range f.dst {
		if cn.id == victim {
			cn.kill()
		} else {
			live = append(live, cn.kafkaAddr())
		}
	}
	t.Logf("killed destination node %d, the only replica of %v (controller %d)", victim, down, md.Controller)
	liveAddrs := strings.Join(live, ",")

	code, stdout, stderr := runMirror(t, liveAddrs, "stop", "closed", "--topic", topic, "--barrier-timeout", "3s", "--json")
	t.Logf("stop --json: exit %d\n%s%s", code, stdout, stderr)
	if code != 1 || !strings.Contains(stderr, "fail closed, nothing was made writable") {
		t.Fatalf("stop: exit %d, stderr %q; want 1, failing closed", code, stderr)
	}
	var rep cli.StopReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("stop --json printed %q: %v", stdout, err)
	}
	if rep.BarrierReached || rep.Stopped {
		t.Errorf("report %+v: want barrier_reached and stopped false", rep)
	}
	for _, name := range down {
		if !strings.Contains(stderr, name+" (") || !strings.Contains(rep.Error, name+" (") {
			t.Errorf("the error does not name %s: %q", name, stderr)
		}
	}

	// Nothing writable, with time for a stop that had been sent to run.
	time.Sleep(time.Second)
	liveMirror, err := admin.NewClient(live)
	if err != nil {
		t.Fatal(err)
	}
	defer liveMirror.Close()
	td, err := describeTopic(ctx, liveMirror, "closed", topic)
	if err != nil {
		t.Fatal(err)
	}
	writable := 0
	for _, pd := range td.Partitions {
		if pd.State == "STOPPED" || pd.State == "STOPPING" {
			writable++
			t.Errorf("p%d is %s after a stop that failed closed", pd.Partition, pd.State)
		}
		if leaders[pd.Partition] == victim {
			continue
		}
		prod := newClient(t, live[0], kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.RecordDeliveryTimeout(5*time.Second))
		err := prod.ProduceSync(ctx, &kgo.Record{Partition: pd.Partition, Value: []byte("must-not-land")}).FirstErr()
		var ke *kerr.Error
		if !errors.As(err, &ke) || ke.Code != mirrormsg.ReadOnlyTopic.Code {
			writable++
			t.Errorf("p%d: produce after a stop that failed closed: %v, want READ_ONLY_TOPIC", pd.Partition, err)
		}
	}
	t.Logf("counts: partitions=%d down=%d writable-after-fail-closed=%d; states %+v", len(td.Partitions), len(down), writable, td.Partitions)
}

// TestMirrorFailoverHelp: `strait mirror --help`, from the binary,
// documents each of issue 27's commands and flags in its text and shows
// each in an example (a line "strait mirror COMMAND ..."; a trailing \
// continues it); each command's own --help lists its flags; and a
// malformed command line exits 2 with one line naming the problem, then
// the command's synopsis, and nothing on stdout.
func TestMirrorFailoverHelp(t *testing.T) {
	t.Parallel()
	run := func(args ...string) (int, string, string) {
		t.Helper()
		p := startProc(t, t.TempDir(), append([]string{"mirror"}, args...)...)
		code, err := p.wait(30 * time.Second)
		if err != nil {
			t.Fatalf("strait mirror %s: %v", strings.Join(args, " "), err)
		}
		return code, p.stdoutString(), p.stderr()
	}
	code, usage, _ := run("--help")
	if code != 0 {
		t.Fatalf("strait mirror --help: exit %d", code)
	}
	examples, text := helpExamples(usage)
	for _, c := range []struct {
		command string
		flag    string   // documented in the text, outside the examples ("": no check)
		example []string // every field in one example of the command
	}{
		{"stop", "--topic", []string{"--topic"}},
		{"stop", "--all", []string{"--all"}},
		{"stop", "--json", []string{"--json"}},
		{"stop", "--barrier-timeout", []string{"--barrier-timeout"}},
		{"stop", "--max-lag-ms", []string{"--max-lag-ms"}},
		{"stop", "--max-lag-records", []string{"--max-lag-records"}},
		{"stop", "--force", []string{"--force"}},
		{"create", "mirror.failover.max.lag.ms", []string{"--config", "mirror.failover.max.lag.ms="}},
		{"create", "mirror.consumer.offsets.sync.active.groups=forward-only", []string{"--config", "mirror.consumer.offsets.sync.active.groups=forward-only"}},
		{"describe", "skipped_group_offsets", []string{"--json"}},
		{"start", "--dry-run", []string{"--dry-run"}},
		{"start", "", []string{"--dry-run", "--json"}},
		{"start", "--export-truncated", []string{"--export-truncated"}},
	} {
		if c.flag != "" && !strings.Contains(text, c.flag) {
			t.Errorf("strait mirror --help does not document %s %s", c.command, c.flag)
		}
		if !slices.ContainsFunc(examples, func(e []string) bool { return exampleHas(e, c.command, c.example) }) {
			t.Errorf("strait mirror --help has no example of %s with %v", c.command, c.example)
		}
	}
	for command, flags := range map[string][]string{
		"stop":   {"-topic", "-all", "-json", "-barrier-timeout", "-max-lag-ms", "-max-lag-records", "-force"},
		"start":  {"-topic", "-dry-run", "-json", "-export-truncated"},
		"create": {"-config"},
	} {
		code, out, _ := run(command, "--help")
		for _, f := range flags {
			if code != 0 || !strings.Contains(out, "\n  "+f+" ") && !strings.Contains(out, "\n  "+f+"\n") {
				t.Errorf("strait mirror %s --help (exit %d) does not list %s:\n%s", command, code, f, out)
			}
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stop", "m", "--all", "--topic", "x"}, "strait mirror stop: --all and --topic exclude each other"},
		{[]string{"stop", "m"}, "strait mirror stop: missing --topic (or --all)"},
		{[]string{"stop", "m", "--topic", "t", "--max-lag-records", "-5"}, "strait mirror stop: --max-lag-records must be 0 or more, got -5"},
		{[]string{"stop", "m", "--topic", "t", "--barrier-timeout", "-1s"}, "strait mirror stop: --barrier-timeout must not be negative, got -1s"},
		{[]string{"start", "m", "--topic", "t", "--json"}, "strait mirror start: --json goes with --dry-run"},
		{[]string{"start", "m", "--topic", "t", "--dry-run", "--wait"}, "strait mirror start: --dry-run starts nothing to --wait for"},
		{[]string{"start", "m", "--include", "o.*", "--dry-run"}, "strait mirror start: --dry-run and --export-truncated take --topic, not --include/--exclude"},
	} {
		code, stdout, stderr := run(c.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || stdout != "" || len(lines) != 2 || lines[0] != c.want || !strings.HasPrefix(lines[1], "usage: strait mirror "+c.args[0]+" NAME ") {
			t.Errorf("strait mirror %s: exit %d\nstdout: %q\nstderr: %q\nwant exit 2, stderr %q and the synopsis", strings.Join(c.args, " "), code, stdout, stderr, c.want)
		}
	}
}

// helpExamples splits a --help text into its examples (each the fields of
// one "strait mirror ..." line, with the lines a trailing \ continues) and
// the rest of the text.
func helpExamples(usage string) (examples [][]string, text string) {
	var rest []string
	var cur []string
	for _, l := range strings.Split(usage, "\n") {
		fs := strings.Fields(l)
		if cur == nil {
			i := slices.Index(fs, "strait")
			if i < 0 || i+1 >= len(fs) || fs[i+1] != "mirror" || i+2 >= len(fs) || strings.HasPrefix(fs[i+2], "[") {
				rest = append(rest, l)
				continue
			}
			fs = fs[i:]
		}
		cont := len(fs) > 0 && fs[len(fs)-1] == `\`
		if cont {
			fs = fs[:len(fs)-1]
		}
		cur = append(cur, fs...)
		if !cont {
			examples, cur = append(examples, cur), nil
		}
	}
	return examples, strings.Join(rest, "\n")
}

// exampleHas: example e runs `strait mirror command` with every field of
// want (a field ending in "=" matches a key=value).
func exampleHas(e []string, command string, want []string) bool {
	if len(e) < 3 || e[2] != command {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(e[3:], func(f string) bool { return f == w || strings.HasSuffix(w, "=") && strings.HasPrefix(f, w) }) {
			return false
		}
	}
	return true
}
