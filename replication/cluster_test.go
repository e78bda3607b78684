package replication

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/vfs"
	"github.com/strait-io/strait/wire"
	"github.com/strait-io/strait/wire/kclient"
)

// wireCluster is n ReplicaManagers, each behind its own wire.Server on
// loopback, followers fetching from leaders through the kgo endpoint, and
// a controller stand-in that takes AlterPartition and publishes images to
// every node.
type wireCluster struct {
	t     *testing.T
	mu    sync.Mutex
	img   *raftmeta.Image
	nodes map[int32]*wireNode
	// alters counts AlterPartition requests; refuse makes the controller
	// unreachable.
	alters atomic.Int32
	refuse atomic.Bool
}

type wireNode struct {
	id     int32
	logs   *storage.LogManager
	rm     *ReplicaManager
	srv    *wire.Server
	dialer *cuttableDialer
}

// wireReplicas serves a ReplicaManager as wire.ReplicaService, as
// broker/'s replicaService does.
type wireReplicas struct{ *ReplicaManager }

func (s wireReplicas) Fetch(ctx context.Context, req *kmsg.FetchRequest) *wire.FetchResult {
	return (*wire.FetchResult)(s.ReplicaManager.Fetch(ctx, req))
}

// kclientLeader connects followers to leaders with wire/kclient through
// dial (nil: net.Dialer), as broker/ does.
func kclientLeader(dial kclient.Dialer) func(LeaderConnConfig) LeaderConn {
	return func(c LeaderConnConfig) LeaderConn {
		return kclient.New(kclient.Config{Addr: c.Addr, ClientID: c.ClientID, Timeout: c.Timeout, Dialer: dial, ReuseResponseBuffer: true})
	}
}

// cuttableDialer dials through net.Dialer until cut, which also closes
// the connections it made.
type cuttableDialer struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func (d *cuttableDialer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return nil, errors.New("test: link cut")
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, host)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *cuttableDialer) setCut(cut bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = cut
	if cut {
		for _, c := range d.conns {
			c.Close()
		}
		d.conns = nil
	}
}

type clusterView struct {
	id int32
	c  *wireCluster
}

func (v clusterView) NodeID() int32 { return v.id }
func (v clusterView) Image() *raftmeta.Image {
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	return v.c.img
}
func (v clusterView) ControllerID() int32 { return 1 }

func (v clusterView) CatchUpMetadata(context.Context) bool { return false }
func (v clusterView) AutoCreateTopics(context.Context, []string) map[string]int16 {
	return nil
}

func newWireCluster(t *testing.T, n int, lagMs int64) *wireCluster {
	t.Helper()
	c := &wireCluster{t: t, img: raftmeta.EmptyImage(), nodes: map[int32]*wireNode{}}
	logger := slog.New(slog.DiscardHandler)
	for id := int32(1); id <= int32(n); id++ {
		logs, err := storage.OpenManager(t.TempDir(), storage.ManagerOptions{FS: vfs.OS{}, Clock: clock.Real{},
			Scheduler: storage.InlineScheduler{}, DefaultConfig: storage.DefaultLogConfig()})
		if err != nil {
			t.Fatal(err)
		}
		node := &wireNode{id: id, logs: logs, dialer: &cuttableDialer{}}
		epoch := int64(100 + id)
		node.rm, err = NewReplicaManager(Config{NodeID: id, Logs: logs, Clock: clock.Real{}, Logger: logger,
			ControllerChannel: c, BrokerEpoch: func() int64 { return epoch }, DialLeader: kclientLeader(node.dialer.dial),
			ReplicaLagTimeMaxMs: lagMs, ReplicaFetchWaitMaxMs: 50, ReplicaFetchBackoffMs: 20, AlterPartitionRetryBackoffMs: 10,
			MinInsyncReplicasFor: func(string, *raftmeta.Image) int32 { return 2 }})
		if err != nil {
			t.Fatal(err)
		}
		node.srv = wire.NewServer(wire.Config{Listeners: []wire.Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}, EventLoops: 1},
			wire.Services{Replicas: wireReplicas{node.rm}, Cluster: clusterView{id, c}}, logger, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := node.srv.Start(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		host, port, _ := net.SplitHostPort(node.srv.Addrs()["PLAINTEXT"])
		p, _ := strconv.Atoi(port)
		c.img.Brokers[id] = &raftmeta.Broker{ID: id, Epoch: epoch,
			Endpoints: []raftmeta.Endpoint{{Listener: "PLAINTEXT", Host: host, Port: int32(p)}}}
		c.nodes[id] = node
		node.rm.ApplyDelta(&raftmeta.Delta{}, c.img)
		node.rm.Start(context.Background())
	}
	t.Cleanup(func() {
		for _, node := range c.nodes {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			node.srv.Shutdown(ctx)
			cancel()
			node.rm.Stop()
			node.logs.Close()
		}
	})
	return c
}

// publishLocked applies a new image to every node.
func (c *wireCluster) publishLocked(d *raftmeta.Delta, img *raftmeta.Image) {
	c.img = img
	for _, id := range []int32{1, 2, 3} {
		if node, ok := c.nodes[id]; ok {
			node.rm.ApplyDelta(d, img)
		}
	}
}

func (c *wireCluster) createTopic(name string, replicas, isr []int32, leader int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &raftmeta.Topic{Name: name, ID: raftmeta.Uuid{0xBB, byte(len(c.img.Topics) + 1)}}
	p := &raftmeta.Partition{Topic: name, TopicID: t.ID, Replicas: replicas, ISR: isr, Leader: leader}
	t.Partitions = []*raftmeta.Partition{p}
	img := cloneImage(c.img)
	img.Topics[name], img.TopicsByID[t.ID] = t, t
	c.publishLocked(&raftmeta.Delta{CreatedTopics: []*raftmeta.Topic{t}, ChangedPartitions: []*raftmeta.Partition{p}}, img)
}

// change applies a PartitionChangeRecord.
func (c *wireCluster) change(topic string, f func(p *raftmeta.Partition)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changeLocked(topic, f)
}

func (c *wireCluster) changeLocked(topic string, f func(p *raftmeta.Partition)) *raftmeta.Partition {
	old := c.img.Topics[topic]
	nt := *old
	np := *old.Partitions[0]
	f(&np)
	np.PartitionEpoch++
	nt.Partitions = []*raftmeta.Partition{&np}
	img := cloneImage(c.img)
	img.Topics[topic], img.TopicsByID[nt.ID] = &nt, &nt
	c.publishLocked(&raftmeta.Delta{ChangedPartitions: []*raftmeta.Partition{&np}}, img)
	return &np
}

// AlterPartition is the controller's side (ReplicationControlManager's
// checks, minus fencing): leader epoch, partition epoch, members assigned.
func (c *wireCluster) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error) {
	c.alters.Add(1)
	if c.refuse.Load() {
		return nil, errors.New("test: controller unreachable")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	for _, rt := range req.Topics {
		t := c.img.TopicsByID[raftmeta.Uuid(rt.TopicID)]
		st := kmsg.NewAlterPartitionResponseTopic()
		st.TopidID = rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionResponseTopicPartition()
			sp.Partition = rp.Partition
			cur := t.Partitions[rp.Partition]
			var isr []int32
			for _, e := range rp.NewEpochISR {
				isr = append(isr, e.BrokerID)
			}
			switch {
			case rp.LeaderEpoch != cur.LeaderEpoch:
				sp.ErrorCode = kerr.FencedLeaderEpoch.Code
			case rp.PartitionEpoch != cur.PartitionEpoch:
				sp.ErrorCode = kerr.InvalidUpdateVersion.Code
			default:
				np := c.changeLocked(t.Name, func(p *raftmeta.Partition) { p.ISR = isr })
				sp.LeaderID, sp.LeaderEpoch, sp.ISR, sp.PartitionEpoch = np.Leader, np.LeaderEpoch, np.ISR, np.PartitionEpoch
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func (c *wireCluster) isr(topic string) []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.img.Topics[topic].Partitions[0].ISR)
}

func (c *wireCluster) partition(id int32, topic string) *Partition {
	p, ok := c.nodes[id].rm.Partition(storage.TopicPartition{Topic: topic})
	if !ok {
		c.t.Fatalf("node %d has no %s", id, topic)
	}
	return p
}

func (c *wireCluster) produce(id int32, acks int16, topic, prefix string, n int) kmsg.ProduceResponseTopicPartition {
	h := &harness{t: c.t, clock: clock.NewManual(time.Now())}
	req := produceReq(11, acks, topic, 0, h.batch(prefix, n))
	req.TimeoutMillis = 5000
	return c.nodes[id].rm.Produce(context.Background(), req).Topics[0].Partitions[0]
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// readAll returns the record values of a log, in offset order.
func readAll(t *testing.T, l *storage.Log) []string {
	t.Helper()
	var out []string
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		info, err := l.Read(off, 1<<20, storage.FetchLogEnd, true)
		if err != nil {
			t.Fatal(err)
		}
		res := &FetchResult{Resp: &kmsg.FetchResponse{Topics: []kmsg.FetchResponseTopic{{Partitions: []kmsg.FetchResponseTopicPartition{{}}}}},
			Slices: [][]storage.FileSlice{{info.Records}}}
		parts := decodeFetch(t, res)
		if len(parts[0].offsets) == 0 {
			t.Fatalf("no progress reading at %d", off)
		}
		for i, o := range parts[0].offsets {
			out = append(out, fmt.Sprintf("%d:%s", o, parts[0].values[i]))
		}
		off = parts[0].offsets[len(parts[0].offsets)-1] + 1
	}
	return out
}

// Replication through real sockets: a follower catches up over the kgo
// endpoint and joins the ISR through AlterPartition; acks=all then waits
// for it; cut off, it leaves the ISR and acks=all is refused; after a
// leader change the old leader truncates its unreplicated suffix.
func TestReplicationOverTheWire(t *testing.T) {
	c := newWireCluster(t, 2, 300)
	c.createTopic("t", []int32{1, 2}, []int32{1}, 1)
	if sp := c.produce(1, -1, "t", "x", 1); sp.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("acks=all with ISR [1] and min ISR 2: %+v", sp)
	}
	if sp := c.produce(1, 1, "t", "a", 5); sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("acks=1: %+v", sp)
	}
	// Node 2 fetches, catches up and is added to the ISR.
	eventually(t, "the ISR expansion", func() bool { return slices.Equal(c.isr("t"), []int32{1, 2}) })
	leader, follower := c.partition(1, "t"), c.partition(2, "t")
	if got := leader.ISR(); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("leader's ISR %v", got)
	}
	if sp := c.produce(1, -1, "t", "b", 3); sp.ErrorCode != 0 || sp.BaseOffset != 5 {
		t.Fatalf("acks=all with the follower in the ISR: %+v", sp)
	}
	eventually(t, "the follower's HW", func() bool { return follower.HighWatermark() == 8 })
	if a, b := readAll(t, leader.Log()), readAll(t, follower.Log()); !slices.Equal(a, b) || len(a) != 8 {
		t.Fatalf("logs differ:\n%v\n%v", a, b)
	}
	if fs := c.nodes[2].rm.FetcherManager().Fetchers(); len(fs) != 1 || fs[0].EndPoint().Broker().ID != 1 {
		t.Fatalf("node 2's fetchers: %v", fs)
	}

	// Cut node 2 off: it lags past replica.lag.time.max.ms and leaves.
	c.nodes[2].dialer.setCut(true)
	if sp := c.produce(1, 1, "t", "c", 2); sp.ErrorCode != 0 || sp.BaseOffset != 8 {
		t.Fatalf("acks=1 while cut: %+v", sp)
	}
	eventually(t, "the ISR shrink", func() bool { return slices.Equal(c.isr("t"), []int32{1}) })
	if sp := c.produce(1, -1, "t", "d", 1); sp.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("acks=all after the shrink: %+v", sp)
	}
	if leader.HighWatermark() != 8 {
		t.Fatalf("HW %d moved under min ISR (KIP-966)", leader.HighWatermark())
	}

	// Node 2 leads epoch 1 (an unclean choice here, for the divergence):
	// node 1 must drop offsets 8 and 9, which node 2 never had.
	c.change("t", func(p *raftmeta.Partition) { p.Leader, p.LeaderEpoch, p.ISR = 2, 1, []int32{2} })
	if sp := c.produce(2, 1, "t", "e", 4); sp.ErrorCode != 0 || sp.BaseOffset != 8 {
		t.Fatalf("the new leader's append: %+v", sp)
	}
	c.nodes[2].dialer.setCut(false)
	old := c.partition(1, "t")
	eventually(t, "the old leader to truncate and catch up", func() bool { return old.Log().LogEndOffset() == 12 })
	a, b := readAll(t, old.Log()), readAll(t, c.partition(2, "t").Log())
	if !slices.Equal(a, b) || a[8] != "8:e-0" || a[11] != "11:e-3" {
		t.Fatalf("after the truncation:\n%v\n%v", a, b)
	}
	eventually(t, "node 1 back in the ISR", func() bool { return slices.Equal(c.isr("t"), []int32{2, 1}) })
}
