package raftmeta

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	return freeAddrs(t, 1)[0]
}

// freeAddrs returns n distinct loopback addresses nobody listens on. The
// listeners stay open until all are picked: closing each first let the
// kernel hand the same port to two voters.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	addrs := make([]string, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}

// deltaLog records what a subscriber saw.
type deltaLog struct {
	mu      sync.Mutex
	offsets []uint64
	lines   []string
	last    *Image
}

func (d *deltaLog) add(delta *Delta, img *Image) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.offsets = append(d.offsets, img.Offset)
	d.lines = append(d.lines, strings.TrimSpace(formatDelta(delta)))
	d.last = img
}

func (d *deltaLog) snapshot() ([]uint64, []string, *Image) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]uint64(nil), d.offsets...), append([]string(nil), d.lines...), d.last
}

func openQuorum(t *testing.T, cfg Config) *Quorum {
	t.Helper()
	q, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func startQuorum(t *testing.T, q *Quorum) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

// exercise drives every kind of write through the controller and returns
// how many batches it appended.
func exercise(t *testing.T, c *Controller, prefix string) int {
	t.Helper()
	ctx := context.Background()
	batches := 0
	check := func(what string, code int16, msg *string) {
		t.Helper()
		if code != 0 {
			t.Fatalf("%s: %s %s", what, codeName(code), deref(msg))
		}
		batches++
	}
	resp := c.CreateTopics(ctx, createReq(7, newTopic(prefix+"a", 2, 1, "retention.ms", "100"), newTopic(prefix+"b", 1, -1)))
	for _, rt := range resp.Topics {
		if rt.ErrorCode != 0 {
			t.Fatalf("create %s: %s", rt.Topic, codeName(rt.ErrorCode))
		}
	}
	batches++
	pr := kmsg.NewPtrCreatePartitionsRequest()
	pr.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: prefix + "b", Count: 3}}
	check("create partitions", c.CreatePartitions(ctx, pr).Topics[0].ErrorCode, nil)
	ir := c.IncrementalAlterConfigs(ctx, incReq(false,
		incRes(topicT, prefix+"a", op{"cleanup.policy", appendOp, s("compact")}, op{"retention.ms", del, nil}),
		incRes(brokerT, "", op{prefix + "x", set, s("1")})))
	check("alter configs", ir.Resources[0].ErrorCode+ir.Resources[1].ErrorCode, nil)
	ar := createACLs(c, aclCreation(topicR, prefix+"a", literal, "User:"+prefix, read, allow))
	check("create acl", ar.Results[0].ErrorCode, ar.Results[0].ErrorMessage)
	b := c.log.Image().Brokers[1]
	if _, _, err := c.AllocateProducerIDs(ctx, 1, b.Epoch); err != nil {
		t.Fatal(err)
	}
	batches++
	dr := c.DeleteTopics(ctx, deleteReq(6, prefix+"b"))
	check("delete topic", dr.Topics[0].ErrorCode, dr.Topics[0].ErrorMessage)
	return batches
}

func TestQuorumSingleVoter(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := Config{NodeID: 1, Dir: dir, ClusterID: "cluster-A", BindAddr: addr, Voters: map[int32]string{1: addr}, TrailingLogs: 2}

	q := openQuorum(t, cfg)
	seen := &deltaLog{}
	q.Subscribe(seen.add)
	if q.IsLeader() || q.LeaderID() != -1 {
		t.Fatal("leader before Start")
	}
	// The issue asks for a ready broker in under a second; this measures
	// the quorum's share.
	if took := startQuorum(t, q); took > time.Second {
		t.Fatalf("single voter ready after %v", took)
	}
	if !q.IsLeader() || q.LeaderID() != 1 || q.Addr() != addr {
		t.Fatalf("leader %v id %d addr %s", q.IsLeader(), q.LeaderID(), q.Addr())
	}
	ctx := context.Background()
	c := q.Controller()
	if err := c.RegisterBroker(ctx, Broker{ID: 1, Endpoints: []Endpoint{{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}}}); err != nil {
		t.Fatal(err)
	}
	batches := 1 + exercise(t, c, "one-")

	img := q.Image()
	if img.ClusterID != "cluster-A" || len(img.Topics) != 1 || img.Topics["one-a"] == nil || img.NextProducerID != 1000 || len(img.ACLs) != 1 {
		t.Fatalf("image:\n%s", formatImage(img))
	}
	if got := configsOf(img, ConfigResourceTopic, "one-a"); got != "cleanup.policy=delete,compact" {
		t.Fatalf("topic configs %q", got)
	}
	offsets, lines, last := seen.snapshot()
	if len(offsets) != batches || last != img {
		t.Fatalf("subscriber saw %d deltas (want %d), last image current: %v", len(offsets), batches, last == img)
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] <= offsets[i-1] {
			t.Fatalf("offsets out of order: %v", offsets)
		}
	}
	wantLines := []string{
		"delta: created=[] deleted=[] partitions=[] configs=[] brokers=[1] acls=false empty=false",
		"delta: created=[one-a one-b] deleted=[] partitions=[one-a-0 one-a-1 one-b-0] configs=[topic/one-a] brokers=[] acls=false empty=false",
		"delta: created=[] deleted=[] partitions=[one-b-1 one-b-2] configs=[] brokers=[] acls=false empty=false",
		"delta: created=[] deleted=[] partitions=[] configs=[topic/one-a broker/] brokers=[] acls=false empty=false",
		"delta: created=[] deleted=[] partitions=[] configs=[] brokers=[] acls=true empty=false",
		"delta: created=[] deleted=[] partitions=[] configs=[] brokers=[] acls=false empty=true",
		"delta: created=[] deleted=[one-b] partitions=[] configs=[] brokers=[] acls=false empty=false",
	}
	if !reflect.DeepEqual(lines, wantLines) {
		t.Fatalf("deltas\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}

	// Reopen: the log is replayed to the identical image, and a subscriber
	// registered before Start sees every batch again, in order.
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	q = openQuorum(t, cfg)
	replayed := &deltaLog{}
	q.Subscribe(replayed.add)
	startQuorum(t, q)
	if !reflect.DeepEqual(q.Image(), img) {
		t.Fatalf("replayed image differs:\n%s\nwant\n%s", formatImage(q.Image()), formatImage(img))
	}
	if ro, rl, _ := replayed.snapshot(); !reflect.DeepEqual(ro, offsets) || !reflect.DeepEqual(rl, lines) {
		t.Fatalf("replay deltas %v %v", ro, rl)
	}

	// Snapshot, then write more: a reopen restores the snapshot (the log
	// before it is gone) and replays what follows.
	r := q.raft.Load()
	if err := r.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if first, _ := q.store.FirstIndex(); first <= 1 {
		t.Fatalf("log not compacted after the snapshot: first index %d", first)
	}
	c = q.Controller()
	exercise(t, c, "two-")
	img = q.Image()
	if len(img.Topics) != 2 || img.NextProducerID != 2000 {
		t.Fatalf("image:\n%s", formatImage(img))
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	q = openQuorum(t, cfg)
	restored := &deltaLog{}
	q.Subscribe(restored.add)
	startQuorum(t, q)
	if !reflect.DeepEqual(q.Image(), img) {
		t.Fatalf("restored image differs:\n%s\nwant\n%s", formatImage(q.Image()), formatImage(img))
	}
	_, rl, _ := restored.snapshot()
	if len(rl) != 7 || rl[0] != "delta: created=[one-a] deleted=[] partitions=[one-a-0 one-a-1] configs=[topic/one-a broker/] brokers=[1] acls=true empty=false" {
		t.Fatalf("deltas after restore:\n%s", strings.Join(rl, "\n"))
	}
	// And the restored quorum keeps accepting writes.
	exercise(t, q.Controller(), "three-")
}

func TestQuorumAutomaticSnapshots(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{NodeID: 3, Dir: dir, BindAddr: "127.0.0.1:0", SnapshotThreshold: 4, SnapshotInterval: 20 * time.Millisecond, TrailingLogs: 1}
	q := openQuorum(t, cfg)
	startQuorum(t, q)
	if q.LeaderID() != 3 || !strings.HasPrefix(q.Addr(), "127.0.0.1:") || strings.HasSuffix(q.Addr(), ":0") {
		t.Fatalf("leader %d at %s", q.LeaderID(), q.Addr())
	}
	ctx := context.Background()
	c := q.Controller()
	if err := c.RegisterBroker(ctx, Broker{ID: 3}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		mustCreate(t, c, newTopic(fmt.Sprint("t", i), 1, 1))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		snaps, err := q.snaps.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(snaps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot taken")
		}
		time.Sleep(20 * time.Millisecond)
	}
	img := q.Image()
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	q = openQuorum(t, cfg)
	startQuorum(t, q)
	if !reflect.DeepEqual(q.Image(), img) {
		t.Fatalf("image after restart differs:\n%s\nwant\n%s", formatImage(q.Image()), formatImage(img))
	}
}

func TestQuorumOpenErrors(t *testing.T) {
	dir := t.TempDir()
	q := openQuorum(t, Config{NodeID: 1, Dir: dir, ClusterID: "A", BindAddr: "127.0.0.1:0"})
	// Closing without starting releases the stores and the listener.
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"other cluster", Config{NodeID: 1, Dir: dir, ClusterID: "B", BindAddr: "127.0.0.1:0"}, `belongs to cluster "A", not "B"`},
		{"bad voter", Config{NodeID: 1, Dir: dir, BindAddr: "127.0.0.1:0", Voters: map[int32]string{2: "127.0.0.1"}}, `voter 2 address "127.0.0.1"`},
		{"no dir", Config{NodeID: 1, BindAddr: "127.0.0.1:0"}, "empty metadata dir"},
		{"negative id", Config{NodeID: -1, Dir: dir, BindAddr: "127.0.0.1:0"}, "node id -1 is negative"},
		{"bad bind", Config{NodeID: 1, Dir: t.TempDir(), BindAddr: "127.0.0.1:notaport"}, "controller listener 127.0.0.1:notaport"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Open(tc.cfg)
			if err == nil {
				q.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
	// An empty cluster id adopts the stored one.
	q = openQuorum(t, Config{NodeID: 1, Dir: dir, BindAddr: "127.0.0.1:0"})
	if q.Image().ClusterID != "A" {
		t.Fatalf("cluster id %q", q.Image().ClusterID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := q.WaitReady(ctx); err == nil {
		t.Fatal("WaitReady before Start succeeded")
	}
}
