package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// readCommitted appends an end record to every partition of topic, outside
// any transaction, and reads each partition from its start with
// isolation.level=read_committed until its end record: what a
// read_committed consumer sees of everything written before. The end
// record is stable only once every transaction before it is decided, so a
// transaction left hanging fails the read (on ctx). It returns the records
// before the end records and counts those whose offset did not increase.
func readCommitted(t testing.TB, ctx context.Context, c *brokertest.Cluster, topic string, partitions int32) (recs []stored, unordered int) {
	t.Helper()
	endValue := fmt.Sprintf("end-%d", time.Now().UnixNano())
	w := c.Client(t, producerOpts()...)
	var ends []*kgo.Record
	for p := range partitions {
		ends = append(ends, &kgo.Record{Topic: topic, Partition: p, Value: []byte(endValue)})
	}
	if err := w.ProduceSync(ctx, ends...).FirstErr(); err != nil {
		t.Fatalf("writing the end records: %v", err)
	}
	w.Close()
	consumer := c.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(200*time.Millisecond))
	defer consumer.Close()
	last := map[int32]int64{}
	ended := map[int32]bool{}
	fetchErrs := map[string]int{}
	for len(ended) < int(partitions) {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s with read_committed: %v; %d of %d partitions reached their end record; fetch errors %v",
				topic, ctx.Err(), len(ended), partitions, fetchErrs)
		}
		fs.EachError(func(_ string, p int32, err error) { fetchErrs[fmt.Sprintf("p%d: %v", p, err)]++ })
		fs.EachRecord(func(r *kgo.Record) {
			if ended[r.Partition] {
				return
			}
			if l, ok := last[r.Partition]; ok && r.Offset <= l {
				unordered++
			}
			last[r.Partition] = r.Offset
			if v := string(r.Value); v == endValue {
				ended[r.Partition] = true
			} else {
				recs = append(recs, stored{partition: r.Partition, offset: r.Offset, value: v})
			}
		})
	}
	if len(fetchErrs) > 0 {
		t.Logf("fetch errors while reading back (retried): %v", fetchErrs)
	}
	return recs, unordered
}

// txnAudit compares the producers' transactions with what read_committed
// readers see.
type txnAudit struct {
	committed, aborted, uncertain int // transactions by outcome
	committedRecords              int
	uncertainVisible              int // uncertain transactions visible whole
	read                          int // records read back
	lost                          int // records of committed transactions not visible
	abortedVisible                int // records of aborted transactions visible
	partial                       int // transactions with some but not all records visible
	dups                          int // extra copies of a visible value
	unknown                       int // visible values no transaction wrote
	unordered                     int // records whose offset did not increase within the partition
}

func (a txnAudit) String() string {
	return fmt.Sprintf("transactions committed=%d aborted=%d uncertain=%d (visible %d); records committed=%d read=%d; "+
		"lost=%d aborted-visible=%d partial-transactions=%d duplicates=%d unknown=%d unordered=%d",
		a.committed, a.aborted, a.uncertain, a.uncertainVisible, a.committedRecords, a.read,
		a.lost, a.abortedVisible, a.partial, a.dups, a.unknown, a.unordered)
}

// ok reports whether no violation was counted.
func (a txnAudit) ok() bool {
	return a.lost == 0 && a.abortedVisible == 0 && a.partial == 0 && a.dups == 0 && a.unknown == 0 && a.unordered == 0
}

// checkTxns audits recs against txns; problems holds up to ten examples
// of each kind of violation.
func checkTxns(txns []txn, recs []stored, unordered int) (a txnAudit, problems []string) {
	var pl problemLog
	note := pl.note
	a.read, a.unordered = len(recs), unordered
	where, values := byValue(recs)
	a.dups = duplicates(where, values, &pl)
	written := map[string]bool{}
	for _, x := range txns {
		visible := 0
		for _, v := range x.values {
			written[v] = true
			if len(where[v]) > 0 {
				visible++
			}
		}
		name := fmt.Sprintf("%s transaction %s/%d (%d records, %s)", x.outcome, x.producer, x.seq, len(x.values), x.why)
		if visible > 0 && visible < len(x.values) {
			a.partial++
			note("partial", "%s: %d records visible", name, visible)
		}
		switch x.outcome {
		case txnCommitted:
			a.committed++
			a.committedRecords += len(x.values)
			if lost := len(x.values) - visible; lost > 0 {
				a.lost += lost
				note("lost", "%s: %d records not visible", name, lost)
			}
		case txnAborted:
			a.aborted++
			if visible > 0 {
				a.abortedVisible += visible
				note("aborted-visible", "%s: %d records visible", name, visible)
			}
		case txnUncertain:
			a.uncertain++
			if visible == len(x.values) {
				a.uncertainVisible++
			}
		}
	}
	for _, v := range values {
		if !written[v] {
			a.unknown++
			note("unknown", "%s at %v was written by no transaction", v, where[v])
		}
	}
	return a, pl.problems
}

// verifyTxns reads topic back with read_committed and asserts the
// transactions' atomicity: committed records all visible once, aborted
// ones not at all, no transaction partly visible.
func verifyTxns(t testing.TB, ctx context.Context, c *brokertest.Cluster, topic string, partitions int32, txns []txn) txnAudit {
	t.Helper()
	recs, unordered := readCommitted(t, ctx, c, topic, partitions)
	a, problems := checkTxns(txns, recs, unordered)
	t.Logf("%s: %v", topic, a)
	for _, p := range problems {
		t.Error(p)
	}
	if !a.ok() {
		t.Errorf("%s: want lost=0 aborted-visible=0 partial-transactions=0 duplicates=0 unknown=0 unordered=0, got %v", topic, a)
	}
	return a
}
