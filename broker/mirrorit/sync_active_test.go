package mirrorit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin"
)

// forwardOnly is the mirror config that syncs active groups forward only.
const forwardOnly = "mirror.consumer.offsets.sync.active.groups=forward-only"

// activeSeed is the randomized tests' seed: STRAIT_TEST_SEED, else random
// (logged, to replay a failure).
func activeSeed(t *testing.T) uint64 {
	seed := rand.Uint64()
	if s := os.Getenv("STRAIT_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STRAIT_TEST_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (STRAIT_TEST_SEED to replay)", seed)
	return seed
}

// joinLive starts a consumer of group on the destination that stays a
// member for the rest of the test, reading (and discarding) what it is
// given and committing nothing by itself, and waits until the group is
// Stable.
func joinLive(t *testing.T, p *pair, group, topic string) *kgo.Client {
	t.Helper()
	cl := p.dst.client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	ctx, cancel := context.WithCancel(p.ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	adm := p.dst.admin(t)
	p.waitFor(20*time.Second, group+" Stable on the destination", func() string {
		ds, err := adm.DescribeGroups(p.ctx, group)
		if err != nil {
			return err.Error()
		}
		if d := ds[group]; d.State != "Stable" || len(d.Members) == 0 {
			return fmt.Sprintf("state %q, %d members", d.State, len(d.Members))
		}
		return ""
	})
	return cl
}

// offsetsRecord is one OffsetCommit record of __consumer_offsets.
type offsetsRecord struct {
	group, topic       string
	partition          int32
	offset             int64
	metadata           string
	logPart, logOffset int64
}

// readOffsetsLog reads the destination's __consumer_offsets up to its
// current ends and returns group's OffsetCommit records, in log order
// within each __consumer_offsets partition (a group lives in one).
func readOffsetsLog(t *testing.T, p *pair, group string) []offsetsRecord {
	t.Helper()
	const offsetsTopic = "__consumer_offsets"
	ends := p.dst.endOffsets(t, p.ctx, offsetsTopic)
	want := map[int32]int64{}
	parts := map[string]map[int32]kgo.Offset{offsetsTopic: {}}
	for part, end := range ends {
		if end > 0 {
			want[part] = end
			parts[offsetsTopic][part] = kgo.NewOffset().AtStart()
		}
	}
	cl := p.dst.client(t, kgo.ConsumePartitions(parts), kgo.FetchMaxWait(100*time.Millisecond))
	var out []offsetsRecord
	for len(want) > 0 {
		fs := cl.PollFetches(p.ctx)
		if p.ctx.Err() != nil {
			t.Fatalf("reading %s: %v; still to read %v", offsetsTopic, p.ctx.Err(), want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := want[r.Partition]; ok && r.Offset >= end-1 {
				delete(want, r.Partition)
			}
			if r.Offset >= ends[r.Partition] || r.Value == nil {
				return
			}
			var k kmsg.OffsetCommitKey
			if err := k.ReadFrom(r.Key); err != nil || k.Version > 1 || k.Group != group {
				return
			}
			var v kmsg.OffsetCommitValue
			if err := v.ReadFrom(r.Value); err != nil {
				t.Fatalf("%s %d/%d: %v", offsetsTopic, r.Partition, r.Offset, err)
			}
			out = append(out, offsetsRecord{group: k.Group, topic: k.Topic, partition: k.Partition, offset: v.Offset,
				metadata: v.Metadata, logPart: int64(r.Partition), logOffset: r.Offset})
		})
	}
	return out
}

// TestSyncActiveGroupNeverRewinds (issue 27, randomized, seeded): a
// consumer of group live stays a member on the destination and commits
// its own increasing offsets as fast as it can, while the source's
// committed offsets of the same group move at random, up and down, and the
// mirror syncs every 30 ms with forward-only. Replaying the destination's
// __consumer_offsets in log order, every offset the sync wrote (tagged by
// the source's commit metadata) is above the one it replaced: the sync
// never moved a committed offset backwards, whatever the interleaving.
// The sync did write, and did skip partitions where the consumer was
// ahead.
func TestSyncActiveGroupNeverRewinds(t *testing.T) {
	t.Parallel()
	seed := activeSeed(t)
	p := newPair(t, 90*time.Second, startOne(t, "source"), startOne(t, "destination", brokertest.WithMetrics()))
	const topic, group, partitions, perPartition = "orders", "live", 3, 200
	p.src.createTopic(t, p.ctx, topic, partitions)
	writeEach(t, p, p.src, topic, partitions, perPartition, "r")
	p.createMirror("mirror.metadata.refresh.interval.ms=30", forwardOnly)
	p.start(topic)
	p.waitMirroring(topic, partitions, 20*time.Second)
	live := joinLive(t, p, group, topic)

	const phase = 4 * time.Second
	ctx, cancel := context.WithTimeout(p.ctx, phase)
	defer cancel()
	var wg sync.WaitGroup
	var srcCommits, dstCommits int
	wg.Add(2)
	go func() {
		// The source: random offsets within the log, up and down.
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 1))
		src := p.src.admin(t)
		for ctx.Err() == nil {
			var os kadm.Offsets
			for part := range int32(partitions) {
				os.Add(kadm.Offset{Topic: topic, Partition: part, At: rng.Int64N(perPartition + 1), LeaderEpoch: -1, Metadata: "src"})
			}
			if resp, err := src.CommitOffsets(ctx, group, os); err == nil && resp.Error() == nil {
				srcCommits++
			}
			time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
		}
	}()
	go func() {
		// The destination's member: its own offsets, increasing by
		// random steps through the log over the test's time (so the
		// source's are as often above as below), committed back to
		// back.
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 2))
		at := make([]int64, partitions)
		began := time.Now()
		for ctx.Err() == nil {
			offs := map[string]map[int32]kgo.EpochOffset{topic: {}}
			for part := range int32(partitions) {
				pace := int64(time.Since(began) * perPartition / phase)
				at[part] = max(at[part], min(pace+rng.Int64N(40)-20, perPartition))
				offs[topic][part] = kgo.EpochOffset{Epoch: -1, Offset: at[part]}
			}
			err := MemberCommit(ctx, live, offs)
			if err == nil {
				dstCommits++
			}
		}
	}()
	wg.Wait()

	// Still a member: nothing below was written while the group was
	// empty (when the sync may set any offset, as KIP-1279 does).
	recs := readOffsetsLog(t, p, group)
	type tp struct {
		topic string
		part  int32
	}
	prev := map[tp]int64{}
	syncs, mine := 0, 0
	for _, r := range recs {
		k := tp{r.topic, r.partition}
		before, seen := prev[k]
		if r.metadata == "src" {
			syncs++
			if seen && r.offset <= before {
				t.Fatalf("the sync moved %s-%d from %d to %d (__consumer_offsets %d/%d; seed %d)",
					r.topic, r.partition, before, r.offset, r.logPart, r.logOffset, seed)
			}
		} else {
			mine++
		}
		prev[k] = r.offset
	}
	ahead, _ := mirrorMetric(t, p.ctx, p.dst.one.MetricsAddr(), "strait_mirror_consumer_group_offsets_skipped_ahead_total")
	p.logf("source commits %d, member commits %d; __consumer_offsets: %d records by the sync, %d by the member; %v partition skips (ahead)",
		srcCommits, dstCommits, syncs, mine, ahead)
	if syncs == 0 || mine == 0 || ahead == 0 {
		t.Fatalf("no race: %d sync records, %d member records, %v skips ahead (seed %d)", syncs, mine, ahead, seed)
	}
}

// TestSyncActiveGroupSkippedReport (issue 27): what the sync leaves alone
// is reported. With the default mode an active group is skipped whole
// (strait_mirror_consumer_group_offsets_skipped_active_total); with
// forward-only its partition behind the source is moved forward while the
// one where the destination's consumer is ahead is left alone and
// reported (strait_mirror_consumer_group_offsets_skipped_ahead_total);
// describe (DescribeMirrors' SkippedGroupOffsets, `strait mirror describe`)
// lists each skip with its reason and offsets.
func TestSyncActiveGroupSkippedReport(t *testing.T) {
	t.Parallel()
	p := newPair(t, 60*time.Second, startOne(t, "source"), startOne(t, "destination", brokertest.WithMetrics()))
	const topic, group, partitions, perPartition = "orders", "busy", 2, 50
	p.src.createTopic(t, p.ctx, topic, partitions)
	writeEach(t, p, p.src, topic, partitions, perPartition, "r")
	p.createMirror(syncInterval)
	p.start(topic)
	p.waitMirroring(topic, partitions, 20*time.Second)
	live := joinLive(t, p, group, topic)
	if err := MemberCommit(p.ctx, live, map[string]map[int32]kgo.EpochOffset{topic: {0: {Epoch: -1, Offset: 10}, 1: {Epoch: -1, Offset: 40}}}); err != nil {
		t.Fatal(err)
	}
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: topic, Partition: 0, At: 30, LeaderEpoch: -1, Metadata: "src"})
	os.Add(kadm.Offset{Topic: topic, Partition: 1, At: 20, LeaderEpoch: -1, Metadata: "src"})
	if resp, err := p.src.admin(t).CommitOffsets(p.ctx, group, os); err != nil || resp.Error() != nil {
		t.Fatalf("commit on the source: %v %v", err, resp.Error())
	}
	dstAdm := p.dst.admin(t)
	fetch := func() (p0, p1 int64) {
		t.Helper()
		os, err := dstAdm.FetchOffsets(p.ctx, group)
		if err != nil {
			t.Fatalf("fetch %s: %v", group, err)
		}
		o0, _ := os.Lookup(topic, 0)
		o1, _ := os.Lookup(topic, 1)
		return o0.At, o1.At
	}
	metric := func(name string) float64 {
		v, _ := mirrorMetric(t, p.ctx, p.dst.one.MetricsAddr(), name)
		return v
	}
	skipped := func() []admin.SkippedGroupOffset {
		ds, err := p.mirror.DescribeMirrors(p.ctx, mirrorName)
		if err != nil || len(ds) != 1 {
			t.Fatalf("describe: %v %v", ds, err)
		}
		return ds[0].SkippedGroupOffsets
	}

	// Skip (the default): the group is reported, its offsets untouched.
	p.waitFor(15*time.Second, "the active group reported skipped", func() string {
		if v := metric("strait_mirror_consumer_group_offsets_skipped_active_total"); v < 2 {
			return fmt.Sprintf("skipped_active %v", v)
		}
		return ""
	})
	if p0, p1 := fetch(); p0 != 10 || p1 != 40 {
		t.Fatalf("skip mode: destination offsets %d, %d; want the member's 10, 40", p0, p1)
	}
	if v := metric("strait_mirror_consumer_group_offsets_skipped_ahead_total"); v != 0 {
		t.Fatalf("skip mode: skipped_ahead %v, want 0", v)
	}
	wantActive := []admin.SkippedGroupOffset{{Group: group, Partition: -1, Reason: "group-active", Committed: -1, Source: -1}}
	if got := skipped(); !slices.Equal(got, wantActive) {
		t.Fatalf("skip mode: describe's skipped group offsets %+v, want %+v", got, wantActive)
	}

	// Forward-only: p0 moves forward to the source's 30, p1 (the member
	// at 40, the source at 20) is left alone and reported.
	alterMirrorConfig(t, p, "mirror.consumer.offsets.sync.active.groups", "forward-only")
	p.waitFor(15*time.Second, "p0 synced forward and p1 reported ahead", func() string {
		p0, p1 := fetch()
		ahead := metric("strait_mirror_consumer_group_offsets_skipped_ahead_total")
		if p0 != 30 || p1 != 40 || ahead < 1 {
			return fmt.Sprintf("offsets %d, %d; skipped_ahead %v", p0, p1, ahead)
		}
		return ""
	})
	wantAhead := []admin.SkippedGroupOffset{{Group: group, Topic: topic, Partition: 1, Reason: "destination-ahead", Committed: 40, Source: 20}}
	p.waitFor(5*time.Second, "describe to show p1 ahead", func() string {
		if got := skipped(); !slices.Equal(got, wantAhead) {
			return fmt.Sprintf("%+v", got)
		}
		return ""
	})
	// The member is still the group's, and its own commits still go in.
	if err := MemberCommit(p.ctx, live, map[string]map[int32]kgo.EpochOffset{topic: {0: {Epoch: -1, Offset: 31}}}); err != nil {
		t.Fatalf("the member's commit after the sync: %v", err)
	}
	p.logf("skip mode reported the group; forward-only moved p0 10 -> 30 and reported p1 (40 > 20)")
}
