package raftmeta

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/ctrlrpc"
)

// faultNet is a dialer per node that can cut links: a cut refuses new
// connections both ways and closes those open.
type faultNet struct {
	mu    sync.Mutex
	addrs map[string]int32 // listener address → node
	cut   map[[2]int32]bool
	conns map[[2]int32][]net.Conn
}

func newFaultNet() *faultNet {
	return &faultNet{addrs: map[string]int32{}, cut: map[[2]int32]bool{}, conns: map[[2]int32][]net.Conn{}}
}

func link(a, b int32) [2]int32 {
	if a > b {
		a, b = b, a
	}
	return [2]int32{a, b}
}

// dialer is node from's Dialer.
func (f *faultNet) dialer(from int32) ctrlrpc.Dialer {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		f.mu.Lock()
		to, known := f.addrs[addr]
		if known && f.cut[link(from, to)] {
			f.mu.Unlock()
			return nil, fmt.Errorf("faultnet: link %d-%d is cut", from, to)
		}
		f.mu.Unlock()
		c, err := ctrlrpc.DefaultDialer(ctx, network, addr)
		if err != nil || !known {
			return c, err
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.cut[link(from, to)] {
			c.Close()
			return nil, fmt.Errorf("faultnet: link %d-%d is cut", from, to)
		}
		f.conns[link(from, to)] = append(f.conns[link(from, to)], c)
		return c, nil
	}
}

func (f *faultNet) setCut(a, b int32, cut bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut[link(a, b)] = cut
	if cut {
		for _, c := range f.conns[link(a, b)] {
			c.Close()
		}
		delete(f.conns, link(a, b))
	}
}

// countingListener counts the connections a node's CONTROLLER listener
// accepts (Config.WrapListener).
type countingListener struct {
	net.Listener
	n *atomic.Int32
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// testCluster runs quorum nodes in one process on loopback.
type testCluster struct {
	t        *testing.T
	net      *faultNet
	accepted map[int32]*atomic.Int32
	voters   map[int32]string
	cfgs     map[int32]Config
	nodes    map[int32]*Quorum
	// brokers are the nodes' broker lifecycles and their channels.
	brokers  map[int32]*BrokerLifecycle
	channels map[int32]*ctrlrpc.Client
}

// newTestCluster prepares voters 1..nVoters (their addresses picked up
// front, as controller.quorum.voters needs them); mod adjusts each
// node's config.
var testLogger *slog.Logger

func newTestCluster(t *testing.T, nVoters int, mod func(*Config)) *testCluster {
	tc := &testCluster{
		t: t, net: newFaultNet(), voters: map[int32]string{}, cfgs: map[int32]Config{}, accepted: map[int32]*atomic.Int32{},
		nodes: map[int32]*Quorum{}, brokers: map[int32]*BrokerLifecycle{}, channels: map[int32]*ctrlrpc.Client{},
	}
	for i, addr := range freeAddrs(t, nVoters) {
		tc.voters[int32(i+1)] = addr
	}
	base := t.TempDir()
	for id := int32(1); id <= int32(nVoters)+1; id++ {
		addr := tc.voters[id]
		if addr == "" {
			addr = "127.0.0.1:0" // the non-voter
		}
		cfg := Config{
			NodeID:               id,
			Dir:                  filepath.Join(base, fmt.Sprint(id)),
			ClusterID:            "cluster-3",
			BindAddr:             addr,
			Voters:               tc.voters,
			Dialer:               tc.net.dialer(id),
			HeartbeatTimeout:     200 * time.Millisecond,
			ElectionTimeout:      200 * time.Millisecond,
			BrokerSessionTimeout: 1500 * time.Millisecond,
			SessionCheckInterval: 50 * time.Millisecond,
			Logger:               testLogger,
		}
		n := &atomic.Int32{}
		tc.accepted[id] = n
		cfg.WrapListener = func(l net.Listener) net.Listener { return countingListener{l, n} }
		if mod != nil {
			mod(&cfg)
		}
		tc.cfgs[id] = cfg
	}
	t.Cleanup(tc.closeAll)
	return tc
}

// start opens and starts node id.
func (tc *testCluster) start(id int32) *Quorum {
	tc.t.Helper()
	q, err := Open(tc.cfgs[id])
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.net.mu.Lock()
	tc.net.addrs[q.Addr()] = id
	tc.net.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Start(ctx); err != nil {
		tc.t.Fatal(err)
	}
	tc.nodes[id] = q
	tc.channels[id] = q.NewClient()
	return q
}

// startBroker registers node id's broker through its own channel and
// heartbeats every 100ms.
func (tc *testCluster) startBroker(ctx context.Context, id int32) *BrokerLifecycle {
	tc.t.Helper()
	q := tc.nodes[id]
	l := NewBrokerLifecycle(BrokerLifecycleConfig{
		NodeID:            id,
		ClusterID:         "cluster-3",
		Endpoints:         []Endpoint{{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9090 + id}},
		ControllerAddr:    q.Addr(),
		Channel:           tc.channels[id],
		MetadataOffset:    func() int64 { return int64(q.Image().Offset) },
		HeartbeatInterval: 100 * time.Millisecond,
	})
	if err := l.Start(ctx); err != nil {
		tc.t.Fatal(err)
	}
	tc.brokers[id] = l
	return l
}

// unfence starts the broker lifecycles of ids and waits until each is
// unfenced.
func (tc *testCluster) unfence(ctx context.Context, ids ...int32) {
	tc.t.Helper()
	for _, id := range ids {
		if err := tc.startBroker(ctx, id).WaitUnfenced(ctx); err != nil {
			tc.t.Fatal(err)
		}
	}
}

// kill stops node id the way its process would stop: heartbeats end, the
// quorum closes.
func (tc *testCluster) kill(id int32) {
	if l := tc.brokers[id]; l != nil {
		l.Stop()
		delete(tc.brokers, id)
	}
	if c := tc.channels[id]; c != nil {
		c.Close()
		delete(tc.channels, id)
	}
	if q := tc.nodes[id]; q != nil {
		if err := q.Close(); err != nil {
			tc.t.Errorf("close node %d: %v", id, err)
		}
		delete(tc.nodes, id)
	}
}

func (tc *testCluster) closeAll() {
	for _, id := range slices.Sorted(mapKeys(tc.nodes)) {
		tc.kill(id)
	}
}

func mapKeys[V any](m map[int32]V) func(func(int32) bool) {
	return func(yield func(int32) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// leader waits until exactly one live node leads and returns its id.
func (tc *testCluster) leader(timeout time.Duration) int32 {
	tc.t.Helper()
	var id int32
	waitFor(tc.t, timeout, "a single leader", func() bool {
		n := 0
		for nid, q := range tc.nodes {
			if q.IsLeader() {
				id = nid
				n++
			}
		}
		return n == 1
	})
	return id
}

// waitFor polls cond every 10ms.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// send sends req through node id's channel and fails on a transport error.
func (tc *testCluster) send(id int32, req kmsg.Request) kmsg.Response {
	tc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := tc.channels[id].Send(ctx, req)
	if err != nil {
		tc.t.Fatalf("node %d: %s: %v", id, kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// createTopic creates a topic through node id's channel.
func (tc *testCluster) createTopic(id int32, name string, partitions int32, rf int16) {
	tc.t.Helper()
	req := createReq(7, newTopic(name, partitions, rf))
	resp := tc.send(id, req).(*kmsg.CreateTopicsResponse)
	if code := resp.Topics[0].ErrorCode; code != 0 {
		tc.t.Fatalf("create %s via node %d: %v %s", name, id, kerr.ErrorForCode(code), deref(resp.Topics[0].ErrorMessage))
	}
}

// topicsEverywhere waits until every live node's image has the topics.
func (tc *testCluster) topicsEverywhere(names ...string) {
	tc.t.Helper()
	waitFor(tc.t, 10*time.Second, "topics "+strings.Join(names, ",")+" on every node", func() bool {
		for _, q := range tc.nodes {
			for _, n := range names {
				if _, ok := q.Image().Topics[n]; !ok {
					return false
				}
			}
		}
		return true
	})
}
