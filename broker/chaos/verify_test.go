package chaos

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// stored is one record as a consumer read it back.
type stored struct {
	partition int32
	offset    int64
	value     string
}

// readAll reads every partition of topic from its start offset to its end
// offset (the high watermark) with a consumer bootstrapped at every node.
// Offsets must come back strictly increasing per partition; unordered
// counts the records that do not.
func readAll(t testing.TB, ctx context.Context, c *brokertest.Cluster, topic string) (recs []stored, ends map[int32]int64, unordered int) {
	t.Helper()
	adm := c.Admin(t)
	startsList, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = startsList.Error()
	}
	if err != nil {
		t.Fatalf("list start offsets of %s: %v", topic, err)
	}
	endsList, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = endsList.Error()
	}
	if err != nil {
		t.Fatalf("list end offsets of %s: %v", topic, err)
	}
	ends = map[int32]int64{}
	next := map[int32]int64{}
	offsets := map[int32]kgo.Offset{}
	for p, lo := range endsList[topic] {
		ends[p] = lo.Offset
		start, _ := startsList.Lookup(topic, p)
		next[p] = start.Offset
		offsets[p] = kgo.NewOffset().At(start.Offset)
	}
	consumer := c.Client(t,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(200*time.Millisecond))
	defer consumer.Close()
	done := func() bool {
		for p, end := range ends {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	last := map[int32]int64{}
	for p := range ends {
		last[p] = -1
	}
	fetchErrs := map[string]int{}
	for !done() {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s back: %v; read up to %v of %v; fetch errors: %v", topic, ctx.Err(), next, ends, fetchErrs)
		}
		fs.EachError(func(_ string, p int32, err error) { fetchErrs[fmt.Sprintf("p%d: %v", p, err)]++ })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset <= last[r.Partition] {
				unordered++
			}
			last[r.Partition] = r.Offset
			next[r.Partition] = max(next[r.Partition], r.Offset+1)
			recs = append(recs, stored{partition: r.Partition, offset: r.Offset, value: string(r.Value)})
		})
	}
	if len(fetchErrs) > 0 {
		t.Logf("fetch errors while reading back (retried): %v", fetchErrs)
	}
	return recs, ends, unordered
}

// audit compares the producers' acknowledgements with what was read back.
type audit struct {
	acked     int // acknowledged records
	read      int // records read back
	lost      int // acknowledged values not read back
	dups      int // extra copies of a value read back
	misplaced int // acknowledged values read at another partition/offset than acknowledged
	unordered int // records whose offset did not increase within the partition
	unacked   int // values read back whose produce failed or was never answered
}

func (a audit) String() string {
	return fmt.Sprintf("acked=%d read=%d lost=%d duplicates=%d misplaced=%d unordered=%d unacked-present=%d",
		a.acked, a.read, a.lost, a.dups, a.misplaced, a.unordered, a.unacked)
}

// problemLog collects up to ten examples of each kind of violation.
type problemLog struct {
	kinds    map[string]int
	problems []string
}

func (p *problemLog) note(kind, format string, args ...any) {
	if p.kinds == nil {
		p.kinds = map[string]int{}
	}
	if p.kinds[kind]++; p.kinds[kind] <= 10 {
		p.problems = append(p.problems, kind+": "+fmt.Sprintf(format, args...))
	}
}

// byValue groups recs by value and lists the values in order.
func byValue(recs []stored) (where map[string][]stored, values []string) {
	where = map[string][]stored{}
	for _, r := range recs {
		where[r.value] = append(where[r.value], r)
	}
	values = make([]string, 0, len(where))
	for v := range where {
		values = append(values, v)
	}
	sort.Strings(values)
	return where, values
}

// duplicates counts the extra copies of each value read back, noting
// them.
func duplicates(where map[string][]stored, values []string, pl *problemLog) int {
	dups := 0
	for _, v := range values {
		if copies := where[v]; len(copies) > 1 {
			dups += len(copies) - 1
			pl.note("duplicate", "%s stored %d times: %v", v, len(copies), copies)
		}
	}
	return dups
}

// check audits recs against acked; problems holds up to ten examples of
// each kind of violation.
func check(acked map[string]ack, recs []stored, unordered int) (a audit, problems []string) {
	var pl problemLog
	note := pl.note
	a.acked, a.read, a.unordered = len(acked), len(recs), unordered
	where, values := byValue(recs)
	a.dups = duplicates(where, values, &pl)
	for _, v := range values {
		if _, ok := acked[v]; !ok {
			a.unacked++
		}
	}
	ackedValues := make([]string, 0, len(acked))
	for v := range acked {
		ackedValues = append(ackedValues, v)
	}
	sort.Strings(ackedValues)
	for _, v := range ackedValues {
		want := acked[v]
		copies, ok := where[v]
		if !ok {
			a.lost++
			note("lost", "%s acknowledged at partition %d offset %d at %s", v, want.partition, want.offset, want.at.Format("15:04:05.000"))
			continue
		}
		if copies[0].partition != want.partition || copies[0].offset != want.offset {
			a.misplaced++
			note("misplaced", "%s acknowledged at %d/%d, read at %d/%d", v, want.partition, want.offset, copies[0].partition, copies[0].offset)
		}
	}
	return a, pl.problems
}

// verifyRecords reads topic back and asserts that no acknowledged record
// is lost, none is stored twice or away from its acknowledged offset, and
// offsets increase.
func verifyRecords(t testing.TB, ctx context.Context, c *brokertest.Cluster, topic string, acked map[string]ack) audit {
	t.Helper()
	recs, ends, unordered := readAll(t, ctx, c, topic)
	a, problems := check(acked, recs, unordered)
	t.Logf("%s: end offsets %v; %v", topic, ends, a)
	for _, p := range problems {
		t.Error(p)
	}
	if a.lost != 0 || a.dups != 0 || a.misplaced != 0 || a.unordered != 0 {
		t.Errorf("%s: want lost=0 duplicates=0 misplaced=0 unordered=0, got %v", topic, a)
	}
	return a
}
