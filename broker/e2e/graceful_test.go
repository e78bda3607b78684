package e2e

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// cleanShutdownFile is the marker Kafka's LogManager writes into a log
// directory when every log was flushed and closed (LogLoader skips
// recovery when it finds it); Strait uses Kafka's name.
const cleanShutdownFile = ".kafka_cleanshutdown"

// TestGracefulStop: SIGTERM exits 0 within 5 s and leaves the clean
// shutdown marker; the restart loads the logs without recovering them,
// and topics, records, committed offsets and the idempotent producer
// state are all back.
func TestGracefulStop(t *testing.T) {
	const (
		topic    = "graceful"
		cfgTopic = "graceful-config"
		idem     = "graceful-idem"
		group    = "graceful-group"
		load     = "graceful-load"
		records  = 1000
	)
	n := newNode(t)
	n.start()
	adm := newAdmin(t, n.kafkaAddr())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	createTopic(t, adm, topic, 3)
	createTopic(t, adm, idem, 1)
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"retention.ms": kadm.StringPtr("123456789")}, cfgTopic); err != nil {
		t.Fatal(err)
	}

	led := newLedger(topic)
	prod := newClient(t, n.kafkaAddr(), kgo.RecordDeliveryTimeout(30*time.Second))
	for i := range records {
		led.produce(ctx, prod, i)
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if errs := led.errors(); len(errs) > 0 {
		t.Fatalf("%d records failed: %s", len(errs), summarizeErrs(errs))
	}
	committed := commitConsumed(t, n.kafkaAddr(), group, topic, records/3)

	// An idempotent producer's two batches: sequences 0-4 at offset 0,
	// 5-9 at offset 5.
	raw := newRawProducer(t, n.kafkaAddr(), idem)
	for _, b := range []struct {
		seq  int32
		want produced
	}{{0, produced{nil, 0}}, {5, produced{nil, 5}}} {
		if got := raw.send(t, b.seq, 5); got != b.want {
			t.Fatalf("batch at seq %d: %v, want %v", b.seq, got, b.want)
		}
	}
	// Under load: a producer keeps sending (and retries across the
	// restart) and a consumer waits in a long-poll Fetch when SIGTERM
	// arrives; neither may hold the stop past 5 s.
	createTopic(t, adm, load, 3)
	topicsBefore := listTopics(t, adm)
	loadLed := newLedger(load)
	loadProd := newClient(t, n.kafkaAddr(), kgo.RecordDeliveryTimeout(30*time.Second))
	stopLoad := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		for i := 0; ; i++ {
			select {
			case <-stopLoad:
				return
			default:
			}
			loadLed.produce(ctx, loadProd, i)
			if i%5 == 4 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	poller := newClient(t, n.kafkaAddr(), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.FetchMaxWait(time.Minute))
	go poller.PollFetches(ctx) // parks a Fetch at the end of topic
	loadLed.waitAcked(t, 500, 10*time.Second)
	time.Sleep(100 * time.Millisecond) // the Fetch is parked by now

	code, took := n.term()
	t.Logf("SIGTERM: exit code %d after %v", code, took.Round(time.Millisecond))
	if code != 0 || took >= 5*time.Second {
		t.Fatalf("SIGTERM: exit code %d after %v; want 0 within 5s", code, took)
	}
	if got := n.cur.linesWith(`msg="strait broker stopped"`); len(got) != 1 {
		t.Errorf("no \"strait broker stopped\" line")
	}
	if _, err := os.Stat(filepath.Join(n.logDir, cleanShutdownFile)); err != nil {
		t.Fatalf("no clean shutdown marker after SIGTERM: %v", err)
	}

	p := n.start()
	loaded := p.linesWith(`msg="log directory loaded"`)
	t.Logf("restart: ready after %v; %s", p.readyAfter().Round(time.Millisecond), firstOr(loaded, "no log directory line"))
	// 3 + 1 + 2 + 3 partitions and the 50 of __consumer_offsets.
	if len(loaded) != 1 || logAttrs(loaded[0])["cleanShutdown"] != "true" || logAttrs(loaded[0])["logs"] != "59" {
		t.Errorf("restart after SIGTERM: log directory line %q, want cleanShutdown=true logs=59", loaded)
	}
	if got := p.linesWith("recovery"); len(got) > 0 {
		t.Errorf("a clean restart mentions recovery: %q", got)
	}
	if _, err := os.Stat(filepath.Join(n.logDir, cleanShutdownFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the clean shutdown marker must be gone once the logs are open (a crash now is not clean): %v", err)
	}

	// Topics: same names, ids, partition counts and configs.
	if got := listTopics(t, adm); !maps.Equal(got, topicsBefore) {
		t.Errorf("topics after restart %v, before %v", got, topicsBefore)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, cfgTopic)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rc.On(cfgTopic, nil); err != nil || !hasConfig(c, "retention.ms", "123456789") {
		t.Errorf("%s configs after restart: %+v %v; want retention.ms=123456789", cfgTopic, c.Configs, err)
	}

	// Records.
	log, ends := readAll(t, n.kafkaAddr(), topic)
	a, problems := check(led.snapshot(), log, ends)
	t.Logf("after restart: %s", a)
	for _, p := range problems {
		t.Error(p)
	}
	if a.present != records || a.lost != 0 || a.duplicates != 0 || a.unacked != 0 || a.gaps != 0 {
		t.Errorf("after restart: %s; want all %d present, nothing else", a, records)
	}

	// Committed offsets, and a consumer resumes there.
	if got := fetchCommitted(t, n.kafkaAddr(), group, topic); !maps.Equal(got, committed) {
		t.Errorf("committed offsets after restart %s, want %s", fmtOffsets(got), fmtOffsets(committed))
	}
	checkResume(t, n.kafkaAddr(), group, topic, committed)

	// Idempotent producer state: a retry of the last batch is recognised
	// as a duplicate and answered with its original offset; the next
	// sequence appends; a gap is out of order.
	for _, b := range []struct {
		seq  int32
		want produced
	}{
		{5, produced{nil, 5}},
		{10, produced{nil, 10}},
		{20, produced{kerr.OutOfOrderSequenceNumber, -1}},
	} {
		if got := raw.send(t, b.seq, 5); got != b.want {
			t.Errorf("after restart, batch at seq %d: %v, want %v", b.seq, got, b.want)
		}
	}
	if _, ends := readAll(t, n.kafkaAddr(), idem); ends[0] != 15 {
		t.Errorf("%s ends at %d after a duplicate and one new batch, want 15", idem, ends[0])
	}
	// The franz-go producer from before the stop carries on with its
	// producer id and sequences.
	for i := records; i < records+100; i++ {
		led.produce(ctx, prod, i)
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if errs := led.errors(); len(errs) > 0 {
		t.Fatalf("%d records failed after restart: %s", len(errs), summarizeErrs(errs))
	}
	log, ends = readAll(t, n.kafkaAddr(), topic)
	if a, _ := check(led.snapshot(), log, ends); a.present != records+100 || a.records != records+100 {
		t.Errorf("after producing on: %s; want %d present", a, records+100)
	}

	// The load producer sent on across the stop and the restart.
	loadLed.waitAcked(t, loadLed.nacked.Load()+500, 10*time.Second)
	close(stopLoad)
	<-loadDone
	if err := loadProd.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	log, ends = readAll(t, n.kafkaAddr(), load)
	la, problems := check(loadLed.snapshot(), log, ends)
	t.Logf("producer sending across the stop and restart: %s, %d failed", la, len(loadLed.errors()))
	for _, p := range problems {
		t.Error(p)
	}
	if errs := loadLed.errors(); len(errs) > 0 {
		t.Errorf("%d records failed: %s", len(errs), summarizeErrs(errs))
	}
	if la.lost != 0 || la.duplicates != 0 || la.unacked != 0 || la.gaps != 0 || la.records != int(loadLed.issued.Load()) {
		t.Errorf("producer across the stop: %s; want all %d records once", la, loadLed.issued.Load())
	}
}

// listTopics maps each non-internal topic to its id and partition count.
func listTopics(t testing.TB, adm *kadm.Client) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	td, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name, d := range td {
		if d.Err != nil {
			t.Fatalf("topic %s: %v", name, d.Err)
		}
		out[name] = d.ID.String() + "/" + strings.Repeat("p", len(d.Partitions))
	}
	return out
}

func hasConfig(rc kadm.ResourceConfig, key, value string) bool {
	for _, c := range rc.Configs {
		if c.Key == key && c.Value != nil && *c.Value == value {
			return true
		}
	}
	return false
}

// TestStopDuringStart: SIGTERM before the broker is ready (just after it
// loaded the logs, or while the quorum elects itself) is still a graceful
// stop: exit 0 within 5 s, and the next start on the directory works. (A
// signal in the first milliseconds, before the Go runtime has run main and
// installed the handler, kills the process as it would any program.)
func TestStopDuringStart(t *testing.T) {
	n := newNode(t)
	for _, after := range []string{`msg="log directory loaded"`, `msg="heartbeat timeout reached, starting election"`} {
		p := startProc(t, t.TempDir(), n.args()...)
		deadline := time.Now().Add(10 * time.Second)
		for len(p.linesWith(after)) == 0 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Microsecond)
		}
		if len(p.linesWith(after)) == 0 {
			t.Fatalf("no %s line within 10s:\n%s", after, p.stderr())
		}
		n.cur = p
		code, took := n.term()
		ready := len(p.linesWith(readyMsg)) > 0
		t.Logf("SIGTERM after %s: exit %d after %v (was ready: %v)", after, code, took.Round(time.Millisecond), ready)
		if code != 0 || took >= 5*time.Second {
			t.Errorf("SIGTERM during start: exit code %d after %v; want 0 within 5s\n%s", code, took, p.stderr())
		}
	}
	n.start()
	if code, _ := n.term(); code != 0 {
		t.Fatalf("SIGTERM: exit code %d", code)
	}
}
