package e2e

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// librdkafka and transactions (KIP-98) against the strait binary: kcat's
// consumer with isolation.level=read_committed must return exactly the
// committed records, skipping aborted ones by the Fetch response's
// aborted_transactions and stopping at the last stable offset while a
// transaction is open; with read_uncommitted it returns everything. kcat
// is also librdkafka's transactional producer: with -X transactional.id
// it sends all of its input in one transaction, committed when the input
// ends and aborted when kcat is signalled first.

// txnCounts counts the values a reader returned by prefix (the part
// before the first '-'), and the values it returned more than once.
type txnCounts struct {
	byPrefix   map[string]int
	duplicates int
}

func countTxnValues(values []string) txnCounts {
	c := txnCounts{byPrefix: map[string]int{}}
	seen := map[string]bool{}
	for _, v := range values {
		if seen[v] {
			c.duplicates++
		}
		seen[v] = true
		prefix, _, _ := strings.Cut(v, "-")
		c.byPrefix[prefix]++
	}
	return c
}

// check fails the test unless c holds exactly want (prefix: count) and
// no duplicate.
func (c txnCounts) check(t *testing.T, what string, want map[string]int) {
	t.Helper()
	t.Logf("%s: %v, duplicates %d", what, c.byPrefix, c.duplicates)
	ok := c.duplicates == 0 && len(c.byPrefix) <= len(want)
	for p, n := range want {
		ok = ok && c.byPrefix[p] == n
	}
	if !ok {
		t.Fatalf("%s read %v with %d duplicates, want %v and none", what, c.byPrefix, c.duplicates, want)
	}
}

// kcatRead reads topic from the beginning to the end with kcat at
// isolation (read_committed or read_uncommitted) and returns the values.
// librdkafka's end, for -e, is the last stable offset under
// read_committed and the high watermark otherwise.
func kcatRead(t *testing.T, ctx context.Context, addr, topic, isolation string) []string {
	t.Helper()
	msgs := decodeKcatMessages(t, kcat(t, ctx, "", "-C", "-b", addr, "-t", topic, "-o", "beginning", "-e", "-q", "-J",
		"-X", "isolation.level="+isolation))
	var out []string
	for _, m := range msgs {
		out = append(out, m.Payload)
	}
	return out
}

// kgoTxn is one franz-go transaction of n records to each partition,
// prefixed prefix; with end nil it is left open, flushed. It returns the
// offset of each partition's first record.
func kgoTxn(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, partitions int32, prefix string, n int, end *kgo.TransactionEndTry) map[int32]int64 {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	recs := make([]*kgo.Record, int(partitions)*n)
	for k := range recs {
		p, i := int32(k/n), k%n
		recs[k] = &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d", prefix, p, i)}
	}
	results := cl.ProduceSync(ctx, recs...)
	if err := results.FirstErr(); err != nil {
		t.Fatalf("%s: transactional produce: %v", prefix, err)
	}
	first := map[int32]int64{}
	for _, r := range results {
		if o, ok := first[r.Record.Partition]; !ok || r.Record.Offset < o {
			first[r.Record.Partition] = r.Record.Offset
		}
	}
	if end != nil {
		if err := cl.EndTransaction(ctx, *end); err != nil {
			t.Fatalf("%s: end transaction: %v", prefix, err)
		}
	}
	return first
}

// waitLastStable waits until every partition of topic has its last
// stable offset at want's (at the high watermark where want has none):
// EndTxn answers once the coordinator decided, and the markers that move
// the last stable offset follow (KIP-98), so a reader that stops at it
// waits for them first.
func waitLastStable(t *testing.T, ctx context.Context, adm *kadm.Client, topic string, want map[int32]int64) {
	t.Helper()
	waitUntil(t, 30*time.Second, topic+"'s last stable offsets", func() (bool, string) {
		lso, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			return false, err.Error()
		}
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return false, err.Error()
		}
		ok, state := true, ""
		lso.Each(func(o kadm.ListedOffset) {
			target, has := want[o.Partition]
			if !has {
				end, _ := ends.Lookup(o.Topic, o.Partition)
				target = end.Offset
			}
			ok = ok && o.Err == nil && o.Offset == target
			state += fmt.Sprintf(" %d: %d (want %d, err %v)", o.Partition, o.Offset, target, o.Err)
		})
		return ok, "last stable offsets" + state
	})
}

func TestKcatReadCommitted(t *testing.T) {
	kcatBin(t)
	n := newNode(t)
	n.start()
	addr := n.kafkaAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const topic, partitions, perTxn = "kcat-txn", 3, 100
	adm := newAdmin(t, addr)
	createTopic(t, adm, topic, partitions)

	// Committed, aborted, committed, then one left open: the aborted
	// records sit between committed ones, and the open transaction
	// holds the last stable offset below the log end.
	commit, abort := kgo.TryCommit, kgo.TryAbort
	prod := newClient(t, addr, kgo.TransactionalID("kcat-txn-producer"), kgo.TransactionTimeout(time.Minute),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	kgoTxn(t, ctx, prod, topic, partitions, "first", perTxn, &commit)
	kgoTxn(t, ctx, prod, topic, partitions, "aborted", perTxn, &abort)
	kgoTxn(t, ctx, prod, topic, partitions, "second", perTxn, &commit)
	open := kgoTxn(t, ctx, prod, topic, partitions, "open", perTxn, nil)
	waitLastStable(t, ctx, adm, topic, open)

	all := partitions * perTxn
	countTxnValues(kcatRead(t, ctx, addr, topic, "read_committed")).check(t, "kcat read_committed with a transaction open",
		map[string]int{"first": all, "second": all})
	countTxnValues(kcatRead(t, ctx, addr, topic, "read_uncommitted")).check(t, "kcat read_uncommitted with a transaction open",
		map[string]int{"first": all, "aborted": all, "second": all, "open": all})

	if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit the open transaction: %v", err)
	}
	waitLastStable(t, ctx, adm, topic, nil)
	countTxnValues(kcatRead(t, ctx, addr, topic, "read_committed")).check(t, "kcat read_committed once it committed",
		map[string]int{"first": all, "second": all, "open": all})

	t.Run("kcat produces transactionally", func(t *testing.T) {
		// librdkafka as the transactional producer this time: one kcat
		// commits its input, another is signalled once its records are
		// in the log, and aborts.
		const topic, n = "kcat-txn-produce", 300
		createTopic(t, adm, topic, partitions)
		kcat(t, ctx, keyedLines("committed", 0, n), "-P", "-b", addr, "-t", topic, "-K:", "-X", "transactional.id=kcat-committer")
		waitLastStable(t, ctx, adm, topic, nil)
		countTxnValues(kcatRead(t, ctx, addr, topic, "read_committed")).check(t, "kcat read_committed of kcat's committed transaction",
			map[string]int{"committed": n})

		before := sumEndOffsets(t, ctx, adm, topic)
		cmd := exec.CommandContext(ctx, kcatBin(t), "-P", "-b", addr, "-t", topic, "-K:", "-X", "transactional.id=kcat-aborter")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errOut strings.Builder
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(stdin, padToChunks(keyedLines("aborted", 0, n), kcatReadChunk)); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, 30*time.Second, fmt.Sprintf("the aborting kcat's %d records to be in the log", n), func() (bool, string) {
			got := sumEndOffsets(t, ctx, adm, topic) - before
			return got >= n, fmt.Sprintf("%d appended", got)
		})
		// kcat aborts when a signal ended its input (kcat.c's
		// producer_run): signal first, then end the input.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("the aborting kcat: %v\n%s", err, errOut.String())
		}
		if !strings.Contains(errOut.String(), "Aborting transaction") {
			t.Fatalf("kcat did not abort its transaction:\n%s", errOut.String())
		}
		waitLastStable(t, ctx, adm, topic, nil)
		countTxnValues(kcatRead(t, ctx, addr, topic, "read_committed")).check(t, "kcat read_committed of kcat's transactions",
			map[string]int{"committed": n})
		countTxnValues(kcatRead(t, ctx, addr, topic, "read_uncommitted")).check(t, "kcat read_uncommitted of kcat's transactions",
			map[string]int{"committed": n, "aborted": n})
	})
}

// sumEndOffsets is the sum of topic's partitions' high watermarks.
func sumEndOffsets(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) int64 {
	t.Helper()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("end offset of %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		sum += o.Offset
	})
	return sum
}

// kcatReadChunk is how kcat 1.7.1 (Debian's) reads its input: fread of
// 1024 bytes, which blocks until a whole chunk or the end of the input,
// so the lines of a partial last chunk wait for more. (Later kcat reads
// what is there.)
const kcatReadChunk = 1024

// padToChunks pads the key of lines' last line ("key:value\n" lines) so
// that lines fill whole chunks of size bytes: kcat then produces every
// line before its input ends.
func padToChunks(lines string, size int) string {
	pad := (size - len(lines)%size) % size
	last := strings.LastIndex(strings.TrimSuffix(lines, "\n"), "\n") + 1
	return lines[:last] + strings.Repeat("x", pad) + lines[last:]
}
