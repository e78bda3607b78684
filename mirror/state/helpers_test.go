package state

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/storage/clock"
)

var (
	ordersID   = [16]byte{0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	paymentsID = [16]byte{0x0b, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8, 0xf7, 0xf6, 0xf5, 0xf4, 0xf3, 0xf2, 0xf1}
)

const testMirrorStatePartitions = 50

// world is a coordinator over an in-memory log and a metadata image the
// test changes.
type world struct {
	t   *testing.T
	log *memLog
	c   *Coordinator

	mu     sync.Mutex
	epochs map[string][]int32 // leader epochs of the data partitions
	img    atomic.Pointer[raftmeta.Image]
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, log: newMemLog(), epochs: map[string][]int32{"orders": {5, 5, 5, 5}, "payments": {3, 3}}}
	w.publish()
	w.c = w.newCoordinator()
	t.Cleanup(func() { w.c.Close() })
	return w
}

func (w *world) newCoordinator() *Coordinator {
	c, err := New(Config{
		Log:          w.log,
		Image:        w.img.Load,
		WriteTimeout: 2 * time.Second,
		Clock:        clock.NewManual(time.UnixMilli(1_700_000_000_000)),
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// publish builds a fresh image from epochs (images are immutable).
func (w *world) publish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	img := raftmeta.EmptyImage()
	add := func(name string, id [16]byte, epochs []int32) {
		t := &raftmeta.Topic{Name: name, ID: id}
		for i, e := range epochs {
			t.Partitions = append(t.Partitions, &raftmeta.Partition{Topic: name, TopicID: id, Index: int32(i), Leader: 1, LeaderEpoch: e})
		}
		img.Topics[name] = t
		img.TopicsByID[id] = t
	}
	add("orders", ordersID, w.epochs["orders"])
	add("payments", paymentsID, w.epochs["payments"])
	add(raftmeta.MirrorStateTopic, [16]byte{0xee}, make([]int32, testMirrorStatePartitions))
	img.Mirrors["m1"] = &raftmeta.Mirror{Name: "m1"}
	w.img.Store(img)
}

// setLeaderEpoch changes a data partition's leader epoch in metadata.
func (w *world) setLeaderEpoch(topic string, p int, epoch int32) {
	w.mu.Lock()
	e := append([]int32(nil), w.epochs[topic]...)
	e[p] = epoch
	w.epochs[topic] = e
	w.mu.Unlock()
	w.publish()
}

// electAll makes the coordinator lead every __mirror_state partition and
// waits for the loads.
func (w *world) electAll(epoch int32) {
	w.t.Helper()
	for p := int32(0); p < testMirrorStatePartitions; p++ {
		w.c.OnElection(p, epoch)
	}
	for p := int32(0); p < testMirrorStatePartitions; p++ {
		w.waitShard(p, shardActive)
	}
}

// waitShard waits until partition p's shard is in state st.
func (w *world) waitShard(p int32, st shardState) {
	w.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := w.c.shard(p)
		if s != nil {
			s.mu.Lock()
			cur := s.state
			s.mu.Unlock()
			if cur == st {
				return
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("shard %d did not reach state %d", p, st)
		}
		time.Sleep(time.Millisecond)
	}
}

// restart is a crash of the coordinator's broker: a new coordinator over
// the same log, elected for every partition.
func (w *world) restart() {
	w.t.Helper()
	w.c.Close()
	w.c = w.newCoordinator()
	w.electAll(1)
}

// view is every record in memory, across shards.
func (w *world) view() map[Key]partition.Record {
	out := map[Key]partition.Record{}
	for _, s := range w.c.allShards() {
		s.mu.Lock()
		maps.Copy(out, s.states)
		s.mu.Unlock()
	}
	return out
}

// rec is a record with the defaults of EmptyRecord and the given state.
func rec(st partition.State, leaderEpoch int32) partition.Record {
	r := partition.EmptyRecord()
	r.State, r.LeaderEpoch = st, leaderEpoch
	return r
}

func key(topicID [16]byte, p int32) Key { return Key{Mirror: "m1", TopicID: topicID, Partition: p} }

// mustWrite writes through the local API and fails the test on error.
func (w *world) mustWrite(k Key, r partition.Record, expected int32) int32 {
	w.t.Helper()
	se, err := w.c.WriteState(context.Background(), Write{Key: k, Record: r, ExpectedStateEpoch: expected})
	if err != nil {
		w.t.Fatalf("write %s %s (expect se=%d): %v", k, r, expected, err)
	}
	return se
}

// wireWrite sends one WriteMirrorStates entry and returns its result.
func (w *world) wireWrite(mirror, topic string, p int32, r partition.Record, expected int32) mirrormsg.WriteMirrorStatesResponsePartitionResult {
	w.t.Helper()
	req := mirrormsg.NewPtrWriteMirrorStatesRequest()
	req.MirrorName = mirror
	tm := mirrormsg.NewWriteMirrorStatesRequestTopicMetadata()
	tm.TopicName = topic
	tm.Partitions = append(tm.Partitions, WritePartition(p, r, expected))
	req.Topics = append(req.Topics, tm)
	resp := w.c.WriteMirrorStates(context.Background(), req)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		w.t.Fatalf("response shape: %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// wireRead sends one ReadMirrorStates entry and returns its result.
func (w *world) wireRead(mirror, topic string, p int32) mirrormsg.ReadMirrorStatesResponsePartitionResult {
	w.t.Helper()
	req := mirrormsg.NewPtrReadMirrorStatesRequest()
	req.MirrorName = mirror
	td := mirrormsg.NewReadMirrorStatesRequestTopicData()
	td.Name = topic
	pd := mirrormsg.NewReadMirrorStatesRequestPartitionData()
	pd.PartitionIndex = p
	td.Partitions = append(td.Partitions, pd)
	req.Topics = append(req.Topics, td)
	resp := w.c.ReadMirrorStates(context.Background(), req)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Name != topic {
		w.t.Fatalf("response shape: %+v", resp)
	}
	pr := resp.Topics[0].Partitions[0]
	if pr.PartitionIndex != p {
		w.t.Fatalf("partition index %d, want %d", pr.PartitionIndex, p)
	}
	return pr
}

// isCode reports whether err carries the Kafka error code.
func isCode(err error, code int16) bool {
	var ke *kerr.Error
	return errors.As(err, &ke) && ke.Code == code
}
