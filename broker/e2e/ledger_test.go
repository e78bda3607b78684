package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ledger records what a producer was told: each record i has key k<i> and
// value v<i>; an acknowledged record has the partition and offset the
// broker answered.
type ledger struct {
	topic string
	// pad follows every value, to make records bigger.
	pad    string
	issued atomic.Int64
	nacked atomic.Int64

	mu    sync.Mutex
	acked map[int]stored
	errs  map[int]error
}

func newLedger(topic string) *ledger {
	return &ledger{topic: topic, acked: map[int]stored{}, errs: map[int]error{}}
}

func recordKey(i int) string   { return fmt.Sprintf("k%06d", i) }
func recordValue(i int) string { return fmt.Sprintf("v%06d", i) }

// produce sends record i asynchronously and notes the outcome.
func (l *ledger) produce(ctx context.Context, cl *kgo.Client, i int) {
	r := &kgo.Record{Topic: l.topic, Key: []byte(recordKey(i)), Value: []byte(recordValue(i) + l.pad)}
	l.issued.Add(1)
	cl.Produce(ctx, r, func(r *kgo.Record, err error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if err != nil {
			l.errs[i] = err
			return
		}
		l.acked[i] = stored{r.Partition, r.Offset, string(r.Key), string(r.Value)}
		l.nacked.Add(1)
	})
}

// snapshot copies the acknowledgements so far.
func (l *ledger) snapshot() map[int]stored {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int]stored, len(l.acked))
	for i, s := range l.acked {
		out[i] = s
	}
	return out
}

func (l *ledger) errors() map[int]error {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int]error, len(l.errs))
	for i, e := range l.errs {
		out[i] = e
	}
	return out
}

// waitAcked waits until at least n records are acknowledged.
func (l *ledger) waitAcked(t testing.TB, n int64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for l.nacked.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d records acknowledged after %v; errors: %v", l.nacked.Load(), n, timeout, summarizeErrs(l.errors()))
		}
		time.Sleep(time.Millisecond)
	}
}

// audit is the comparison of acknowledged records with the log.
type audit struct {
	acked      int // acknowledged records checked
	present    int // acknowledged records found exactly where acknowledged
	lost       int // acknowledged records missing from their offset
	duplicates int // extra copies of any value in the log
	unacked    int // records in the log the producer was not told about
	records    int // records in the log
	gaps       int // offsets below the end offset that hold no record
}

func (a audit) String() string {
	return fmt.Sprintf("acked=%d present=%d lost=%d duplicates=%d unacked-present=%d records=%d gaps=%d",
		a.acked, a.present, a.lost, a.duplicates, a.unacked, a.records, a.gaps)
}

// check compares acked with what the log holds; problems lists up to ten
// examples of each kind.
func check(acked map[int]stored, log []stored, ends map[int32]int64) (a audit, problems []string) {
	at := map[int32]map[int64]stored{}
	copies := map[string]int{}
	for _, s := range log {
		if at[s.partition] == nil {
			at[s.partition] = map[int64]stored{}
		}
		at[s.partition][s.offset] = s
		copies[s.value]++
	}
	a.records = len(log)
	var total int64
	for _, end := range ends {
		total += end
	}
	a.gaps = int(total) - len(log)
	note := func(kind string, format string, args ...any) {
		n := 0
		for _, p := range problems {
			if strings.HasPrefix(p, kind) {
				n++
			}
		}
		if n < 10 {
			problems = append(problems, kind+": "+fmt.Sprintf(format, args...))
		}
	}
	ackedValues := map[string]bool{}
	for i, want := range acked {
		a.acked++
		ackedValues[want.value] = true
		got, ok := at[want.partition][want.offset]
		if ok && got.key == want.key && got.value == want.value {
			a.present++
			continue
		}
		a.lost++
		note("lost", "record %d (%s) acknowledged at %d/%d; found there: %+v (present=%v)", i, want.value, want.partition, want.offset, got, ok)
	}
	values := make([]string, 0, len(copies))
	for v := range copies {
		values = append(values, v)
	}
	sort.Strings(values)
	for _, v := range values {
		if c := copies[v]; c > 1 {
			a.duplicates += c - 1
			note("duplicate", "%s stored %d times", v, c)
		}
		if !ackedValues[v] {
			a.unacked++
		}
	}
	return a, problems
}

func summarizeErrs(errs map[int]error) string {
	count := map[string]int{}
	for _, e := range errs {
		count[e.Error()]++
	}
	var parts []string
	for e, n := range count {
		parts = append(parts, fmt.Sprintf("%dx %s", n, e))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}
