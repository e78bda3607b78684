package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestThreeNodeCluster starts three strait binaries from properties
// files as a Kafka KRaft combined-mode user does (issue 4: "an end-to-end
// test that starts three strait binaries from properties files") and
// checks the user-facing contract: every node lists every broker, a topic
// created through one node is seen through another, an idempotent acks=all
// producer loses and duplicates nothing across a SIGKILL of a partition
// leader (the controller fences it after broker.session.timeout.ms and
// elects from the ISR) and a SIGTERM of another (controlled shutdown moves
// its leaderships away before it exits, KIP-500's BrokerHeartbeat
// WantShutDown), and a consumer group's committed offsets survive both.
func TestThreeNodeCluster(t *testing.T) {
	const (
		topic    = "cluster"
		group    = "cluster-group"
		parts    = 3
		rf       = 3
		initial  = 5000
		perPhase = 300 // records acknowledged after each fault before the next
		// The 50 partitions of __consumer_offsets (offsets.topic.num.partitions).
		allPartitions = parts + 50
	)
	testStart := time.Now()
	nodes := newClusterNodes(t, 3,
		"default.replication.factor=3",
		"min.insync.replicas=2",
		"offsets.topic.replication.factor=3",
		// Short enough that a killed broker is fenced and its partitions
		// get new leaders within the test's budget.
		"broker.session.timeout.ms=3000",
		"broker.heartbeat.interval.ms=300",
	)
	byID := func(id int32) *clusterNode { return nodes[id-1] }
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// Start: the voters elect a controller once two of them run, so they
	// start together, as a cluster's operator starts them.
	for _, cn := range nodes {
		cn.launch()
	}
	for _, cn := range nodes {
		cn.awaitReady(30 * time.Second)
	}
	for _, cn := range nodes {
		t.Logf("node %d ready after %v", cn.id, cn.cur.readyAfter().Round(time.Millisecond))
	}

	// Every node, asked alone, lists the three brokers at their
	// advertised addresses.
	var want []string
	for _, cn := range nodes {
		want = append(want, fmt.Sprintf("%d@127.0.0.1:%d", cn.id, cn.ports.kafka))
	}
	for _, cn := range nodes {
		waitUntil(t, 5*time.Second, fmt.Sprintf("node %d to list brokers %v", cn.id, want), func() (bool, string) {
			m, err := cn.metadata(ctx)
			if err != nil {
				return false, err.Error()
			}
			got := brokerIDs(m)
			return slices.Equal(got, want), fmt.Sprintf("lists %v", got)
		})
	}

	// A topic created through a node that is not the active controller
	// (the broker forwards CreateTopics) with the broker defaults for the
	// replication factor, then seen through a third node.
	m, err := nodes[0].metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	controller := m.ControllerID
	if controller < 1 || controller > 3 {
		t.Fatalf("metadata names controller %d, want one of the voters 1..3", controller)
	}
	via := byID(1 + controller%3)
	other := byID(1 + (controller+1)%3)
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, parts, -1
	create.Topics = append(create.Topics, ct)
	create.TimeoutMillis = 10000
	resp, err := via.request(ctx, create)
	if err != nil {
		t.Fatalf("CreateTopics through node %d: %v", via.id, err)
	}
	if cr := resp.(*kmsg.CreateTopicsResponse); len(cr.Topics) != 1 || cr.Topics[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics through node %d (controller %d): %+v", via.id, controller, cr.Topics)
	}
	waitUntil(t, 5*time.Second, fmt.Sprintf("node %d to show %s with %d partitions of %d in-sync replicas", other.id, topic, parts, rf), func() (bool, string) {
		m, err := other.metadata(ctx)
		if err != nil {
			return false, err.Error()
		}
		var ps []partitionState
		for _, p := range partitions(m) {
			if p.topic == topic {
				ps = append(ps, p)
			}
		}
		if len(ps) != parts {
			return false, fmt.Sprintf("%d partitions: %+v", len(ps), ps)
		}
		for _, p := range ps {
			if p.err != nil || p.leader < 0 || len(p.replicas) != rf || len(p.isr) != rf {
				return false, fmt.Sprintf("%+v", p)
			}
		}
		return true, ""
	})
	t.Logf("created %s through node %d (controller: node %d), seen through node %d", topic, via.id, controller, other.id)

	// Phase 1: acknowledged by all in-sync replicas before any fault,
	// half of it consumed and committed by a group.
	addrs := clusterAddrs(nodes)
	led := newLedger(topic)
	prod := newClient(t, addrs[0], kgo.SeedBrokers(addrs...),
		kgo.RequiredAcks(kgo.AllISRAcks()), // idempotent by default
		kgo.RecordDeliveryTimeout(60*time.Second),
		kgo.ProducerLinger(time.Millisecond),
	)
	for i := range initial {
		led.produce(ctx, prod, i)
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if errs := led.errors(); len(errs) > 0 {
		t.Fatalf("%d records failed before any fault: %s", len(errs), summarizeErrs(errs))
	}
	committed := commitConsumed(t, other.kafkaAddr(), group, topic, initial/2)
	t.Logf("phase 1: %d records acknowledged; group %s committed %s", initial, group, fmtOffsets(committed))

	// From here a producer sends about one record a millisecond until
	// the end, through every fault.
	stop := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := initial; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			led.produce(ctx, prod, i)
			time.Sleep(time.Millisecond)
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			// The test failed on the way: a producer blocked on a full
			// buffer returns once ctx ends.
			close(stop)
			cancel()
			<-sent
		}
	}()
	// progress waits until perPhase more records are acknowledged: the
	// producer goes on whatever happened. Without a fault that takes
	// about perPhase ms; a leader that holds acks=all produces until
	// they time out (kgo's 10 s ProduceRequestTimeout) takes longer than
	// the 5 s allowed.
	progress := func(what string) {
		t.Helper()
		start := time.Now()
		led.waitAcked(t, led.nacked.Load()+perPhase, 30*time.Second)
		took := time.Since(start)
		t.Logf("%s: %d more records acknowledged in %v", what, perPhase, took.Round(time.Millisecond))
		if took > 5*time.Second {
			t.Errorf("%s: %d records took %v to be acknowledged, want < 5s", what, perPhase, took)
		}
	}
	progress("producer running")
	live := func() []*clusterNode {
		var out []*clusterNode
		for _, cn := range nodes {
			if cn.running() {
				out = append(out, cn)
			}
		}
		return out
	}
	// leader is topic/p's leader as a running node sees it.
	leader := func(p int32) int32 {
		for _, cn := range live() {
			if m, err := cn.metadata(ctx); err == nil {
				return leaderIn(m, topic, p)
			}
		}
		return -1
	}
	// leaderNode is the node leading topic/p, which must have one.
	leaderNode := func(p int32) *clusterNode {
		t.Helper()
		l := leader(p)
		if l < 1 || int(l) > len(nodes) {
			t.Fatalf("%s-%d has leader %d", topic, p, l)
		}
		return byID(l)
	}
	// fullyReplicated waits until every running node, asked alone, shows
	// every partition (ours and __consumer_offsets) led with 3 in-sync
	// replicas.
	fullyReplicated := func(what string) {
		t.Helper()
		for _, cn := range nodes {
			took := waitUntil(t, 30*time.Second, fmt.Sprintf("node %d to show every partition with %d in-sync replicas %s", cn.id, rf, what), func() (bool, string) {
				m, err := cn.metadata(ctx)
				if err != nil {
					return false, err.Error()
				}
				n, bad := notFullyReplicated(m, rf)
				if n != allPartitions {
					return false, fmt.Sprintf("%d partitions listed, want %d", n, allPartitions)
				}
				return bad == "", bad
			})
			t.Logf("node %d shows all %d partitions with ISR=%d %s (waited %v)", cn.id, allPartitions, rf, what, took.Round(time.Millisecond))
		}
	}

	// Phase 2: SIGKILL the leader of partition 0 while records are in
	// flight; the controller fences it after its session and elects a
	// new leader from the ISR, and acks=all produces go on with two
	// in-sync replicas (min.insync.replicas=2).
	victim := leaderNode(0)
	for deadline := time.Now().Add(time.Second); led.issued.Load() == led.nacked.Load() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Microsecond)
	}
	killedAt := time.Now()
	victim.kill()
	t.Logf("SIGKILL node %d, leader of %s-0, with %d records acknowledged of %d sent", victim.id, topic, led.nacked.Load(), led.issued.Load())
	waitUntil(t, 20*time.Second, fmt.Sprintf("a new leader of %s-0 after node %d was killed", topic, victim.id), func() (bool, string) {
		l := leader(0)
		return l > 0 && l != victim.id, fmt.Sprintf("leader %d", l)
	})
	t.Logf("%s-0 led by node %d %v after the kill (broker.session.timeout.ms=3000)", topic, leader(0), time.Since(killedAt).Round(time.Millisecond))
	progress(fmt.Sprintf("node %d down", victim.id))
	victim.launch()
	victim.awaitReady(30 * time.Second)
	loaded := victim.cur.linesWith(`msg="log directory loaded"`)
	t.Logf("node %d restarted: ready after %v; %s", victim.id, victim.cur.readyAfter().Round(time.Millisecond), firstOr(loaded, "no log directory line"))
	if len(loaded) != 1 || logAttrs(loaded[0])["cleanShutdown"] != "false" {
		t.Errorf("node %d after SIGKILL: log directory line %q, want cleanShutdown=false", victim.id, loaded)
	}
	fullyReplicated(fmt.Sprintf("after node %d's restart", victim.id))
	progress(fmt.Sprintf("node %d back", victim.id))

	// Phase 3: SIGTERM a node that leads partitions. It asks the
	// controller to move its leaderships away (controlled shutdown) and
	// exits 0 within 5 s; right after it exited no node's metadata names
	// it leader of anything, and the producer saw no error.
	var leads []string
	stopping := leaderNode(0)
	if m, err := stopping.metadata(ctx); err == nil {
		leads = ledBy(m, stopping.id)
	}
	code, took := stopping.term()
	t.Logf("SIGTERM node %d (leading %d partitions, %d of them %s's): exit code %d after %v", stopping.id, len(leads),
		len(slices.DeleteFunc(slices.Clone(leads), func(p string) bool { return !strings.HasPrefix(p, topic+"-") })), topic,
		code, took.Round(time.Millisecond))
	if code != 0 || took >= 5*time.Second {
		t.Fatalf("SIGTERM node %d: exit code %d after %v; want 0 within 5s", stopping.id, code, took)
	}
	for _, cn := range live() {
		m, err := cn.metadata(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if still := ledBy(m, stopping.id); len(still) > 0 {
			t.Errorf("right after node %d exited, node %d's metadata names it leader of %v: leadership did not move before the exit", stopping.id, cn.id, still)
		}
		// Kafka's controller also takes a broker in controlled shutdown
		// out of every ISR (ReplicationControlManager
		// handleBrokerInControlledShutdown), so that it is not elected
		// again while it stops.
		if in := inISRs(m, stopping.id); len(in) > 0 {
			t.Errorf("right after node %d exited, node %d's metadata still has it in the ISR of %v", stopping.id, cn.id, in)
		}
	}
	granted := stopping.cur.linesWith(`msg="controlled shutdown granted"`)
	if len(granted) != 1 {
		t.Errorf("node %d logged %d \"controlled shutdown granted\" lines, want 1", stopping.id, len(granted))
	}
	if errs := led.errors(); len(errs) > 0 {
		t.Fatalf("%d records failed by the controlled shutdown: %s", len(errs), summarizeErrs(errs))
	}
	progress(fmt.Sprintf("node %d stopped", stopping.id))
	stopping.launch()
	stopping.awaitReady(30 * time.Second)
	loaded = stopping.cur.linesWith(`msg="log directory loaded"`)
	t.Logf("node %d restarted: ready after %v; %s", stopping.id, stopping.cur.readyAfter().Round(time.Millisecond), firstOr(loaded, "no log directory line"))
	if len(loaded) != 1 || logAttrs(loaded[0])["cleanShutdown"] != "true" {
		t.Errorf("node %d after SIGTERM: log directory line %q, want cleanShutdown=true", stopping.id, loaded)
	}
	fullyReplicated(fmt.Sprintf("after node %d's restart", stopping.id))
	progress(fmt.Sprintf("node %d back", stopping.id))

	// Read everything back.
	close(stop)
	<-sent
	if err := prod.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	errs := led.errors()
	log, ends := readAll(t, addrs[0], topic)
	a, problems := check(led.snapshot(), log, ends)
	t.Logf("read back: %s; %d records sent, %d failed; end offsets %v", a, led.issued.Load(), len(errs), ends)
	for _, p := range problems {
		t.Error(p)
	}
	if len(errs) != 0 {
		t.Errorf("%d records failed: %s", len(errs), summarizeErrs(errs))
	}
	if sent := int(led.issued.Load()); a.lost != 0 || a.duplicates != 0 || a.unacked != 0 || a.gaps != 0 ||
		a.acked != sent || a.present != sent || a.records != sent {
		t.Errorf("read back: %s; want all %d records sent acknowledged and present once", a, sent)
	}
	for _, cn := range nodes {
		if got := fetchCommitted(t, cn.kafkaAddr(), group, topic); !maps.Equal(got, committed) {
			t.Errorf("committed offsets through node %d: %s, want %s", cn.id, fmtOffsets(got), fmtOffsets(committed))
		}
	}
	checkResume(t, addrs[0], group, topic, committed)
	t.Logf("done in %v", time.Since(testStart).Round(time.Millisecond))
}
