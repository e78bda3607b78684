package e2e

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// crashPlan is one crash-durability run: produce records records with an
// idempotent acks=all producer; the first sync of them are acknowledged
// before a consumer group commits about half of those; the rest are sent
// paced, and the broker is SIGKILLed each time the acknowledged count
// reaches one of killAt, while the producer still sends, then restarted on
// the same data directory and ports. The producer keeps running across the
// restarts (its retries must be deduplicated by the restarted broker).
type crashPlan struct {
	records int
	sync    int
	killAt  []int
	// pace is how many records are sent between 1 ms pauses in the
	// second phase, so kills land mid-stream.
	pace int
}

// TestCrashDurability: every record acknowledged with acks=all before a
// SIGKILL is in the log exactly once, at the offset it was acknowledged
// with, after the restart; committed group offsets survive too. Like
// Kafka, acks=all means "in the ISR's logs" (here the leader's page
// cache), not fsynced: a process kill keeps the page cache, a power loss
// would not (log.flush.interval.messages=1 covers that).
func TestCrashDurability(t *testing.T) {
	runCrash(t, crashPlan{records: 5000, sync: 2000, killAt: []int{3000}, pace: 20})
}

func runCrash(t *testing.T, plan crashPlan) {
	const (
		topic = "crash"
		group = "crash-group"
	)
	n := newNode(t)
	n.start()
	adm := newAdmin(t, n.kafkaAddr())
	createTopic(t, adm, topic, 3)

	led := newLedger(topic)
	prod := newClient(t, n.kafkaAddr(),
		kgo.RequiredAcks(kgo.AllISRAcks()), // idempotence is on by default and needs acks=all
		kgo.RecordDeliveryTimeout(60*time.Second),
		kgo.ProducerLinger(time.Millisecond),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// Phase 1: acknowledged before anything goes wrong, partly consumed
	// and committed by a group.
	for i := range plan.sync {
		led.produce(ctx, prod, i)
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if errs := led.errors(); len(errs) > 0 {
		t.Fatalf("%d records failed before any crash: %s", len(errs), summarizeErrs(errs))
	}
	committed := commitConsumed(t, n.kafkaAddr(), group, topic, plan.sync/2)
	t.Logf("group %s committed %s", group, fmtOffsets(committed))
	topicsBefore := listTopics(t, adm)

	// Phase 2: a paced producer, killed under.
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := plan.sync; i < plan.records; i++ {
			led.produce(ctx, prod, i)
			if (i+1)%plan.pace == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	ackedBeforeKill := map[int]stored{}
	for k, at := range plan.killAt {
		led.waitAcked(t, int64(at), 60*time.Second)
		// Kill with records in flight (the producer issues in bursts).
		for deadline := time.Now().Add(time.Second); led.issued.Load() == led.nacked.Load() && time.Now().Before(deadline); {
			time.Sleep(50 * time.Microsecond)
		}
		n.kill()
		before := led.snapshot()
		issued := led.issued.Load()
		maps.Copy(ackedBeforeKill, before)
		t.Logf("kill %d: SIGKILL with %d records acknowledged, %d issued, %d not acknowledged yet",
			k+1, len(before), issued, issued-int64(len(before)))
		if issued == int64(plan.records) && len(before) == plan.records {
			t.Fatalf("kill %d: the producer had finished; the kill must land while it sends", k+1)
		}
		p := n.start()
		t.Logf("restart %d: ready after %v; %s", k+1, p.readyAfter().Round(time.Millisecond),
			firstOr(p.linesWith(`msg="log directory loaded"`), "no log directory line"))
		if got := p.linesWith("cleanShutdown=true"); len(got) > 0 {
			t.Fatalf("restart after SIGKILL claims a clean shutdown: %v", got)
		}
	}
	<-sent
	if err := prod.Flush(ctx); err != nil {
		t.Fatalf("flush after the restart: %v", err)
	}
	all := led.snapshot()
	errs := led.errors()

	log, ends := readAll(t, n.kafkaAddr(), topic)
	a, problems := check(ackedBeforeKill, log, ends)
	t.Logf("acknowledged before a kill: %s (unacked-present: acknowledged only after a restart)", a)
	total, totalProblems := check(all, log, ends)
	t.Logf("all acknowledged (%d of %d produced, %d failed): %s", len(all), plan.records, len(errs), total)
	for _, p := range append(problems, totalProblems...) {
		t.Error(p)
	}
	if a.lost != 0 || a.duplicates != 0 || a.present != len(ackedBeforeKill) {
		t.Errorf("before the kill: %s; want lost=0 duplicates=0 present=%d", a, len(ackedBeforeKill))
	}
	// The idempotent producer retried across the restart: nothing may
	// fail, and its retries must not be written twice.
	if len(errs) != 0 {
		t.Errorf("%d records failed: %s", len(errs), summarizeErrs(errs))
	}
	if total.lost != 0 || total.duplicates != 0 || total.unacked != 0 || total.gaps != 0 || total.records != plan.records {
		t.Errorf("after the restart: %s; want %d records, none lost, duplicated, unacknowledged or missing", total, plan.records)
	}

	if got := listTopics(t, adm); !maps.Equal(got, topicsBefore) {
		t.Errorf("topics after the crash %v, before %v", got, topicsBefore)
	}
	if got := fetchCommitted(t, n.kafkaAddr(), group, topic); !maps.Equal(got, committed) {
		t.Errorf("committed offsets after the crash: %s, want %s", fmtOffsets(got), fmtOffsets(committed))
	}
	checkResume(t, n.kafkaAddr(), group, topic, committed)
}

func firstOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[0]
}
