package txn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime/runtimetest"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
)

// memLog is an in-memory __transaction_state: each partition a list of
// batches, offsets assigned on append, the high watermark the log end.
type memLog struct {
	mu       sync.Mutex
	parts    map[int32][]record.Batch
	failNext []error
	readGate chan struct{}
}

func newMemLog() *memLog { return &memLog{parts: map[int32][]record.Batch{}} }

func (l *memLog) leo(p int32) int64 {
	bs := l.parts[p]
	if len(bs) == 0 {
		return 0
	}
	return bs[len(bs)-1].NextOffset()
}

func (l *memLog) Append(_ context.Context, p int32, batch []byte) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failNext) > 0 {
		err := l.failNext[0]
		l.failNext = l.failNext[1:]
		return 0, err
	}
	b, err := record.ReadBatch(batch)
	if err != nil || len(b) != len(batch) || !b.ValidCRC() {
		return 0, errors.New("memLog: bad batch")
	}
	cp := record.Batch(append([]byte(nil), batch...))
	cp.SetBaseOffset(l.leo(p))
	l.parts[p] = append(l.parts[p], cp)
	return cp.LastOffset(), nil
}

func (l *memLog) Read(ctx context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
	l.mu.Lock()
	gate := l.readGate
	l.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, 0, 0, ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out, next := runtimetest.ReadBatches(l.parts[p], from, maxBytes)
	return out, next, l.leo(p), nil
}

// states lists the states written for id to partition p, in log order
// ("Dead" for a tombstone).
func (l *memLog) states(t *testing.T, p int32, id string) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, b := range l.parts[p] {
		rr := record.NewUncompressedReader(b)
		for rr.Remaining() > 0 {
			rec, err := rr.Next(true)
			if err != nil {
				t.Fatal(err)
			}
			var value []byte
			if rec.ValueLen >= 0 {
				value = rec.Value
			}
			got, m, err := decodeRecord(rec.Key, value)
			if err != nil {
				t.Fatal(err)
			}
			if got != id {
				continue
			}
			if m == nil {
				out = append(out, "Dead")
				continue
			}
			out = append(out, m.State.String())
		}
	}
	return out
}

// fakeMarkers is the partition leaders: it records every WriteTxnMarkers
// and answers each partition with the code err returns (0: written).
type fakeMarkers struct {
	mu   sync.Mutex
	reqs []markerCall
	err  func(tp storage.TopicPartition) int16
	gate chan struct{} // when set, each request waits for a receive
}

type markerCall struct {
	broker     int32
	pid        int64
	epoch      int16
	commit     bool
	coordEpoch int32
	partitions []storage.TopicPartition
}

func (f *fakeMarkers) WriteTxnMarkers(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	f.mu.Lock()
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range req.Markers {
		call := markerCall{broker: broker, pid: m.ProducerID, epoch: m.ProducerEpoch, commit: m.Committed, coordEpoch: m.CoordinatorEpoch}
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				tp := storage.TopicPartition{Topic: t.Topic, Partition: p}
				call.partitions = append(call.partitions, tp)
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				if f.err != nil {
					rp.ErrorCode = f.err(tp)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
		f.reqs = append(f.reqs, call)
	}
	return resp, nil
}

func (f *fakeMarkers) calls() []markerCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]markerCall(nil), f.reqs...)
}

// testNumPartitions is the test __transaction_state's partition count.
const testNumPartitions = 3

// env is a coordinator over a memLog leading every partition, with data
// topics "a" (leader 1) and "b" (leader 2), two partitions each.
type env struct {
	t       *testing.T
	log     *memLog
	markers *fakeMarkers
	clk     *clock.Manual
	c       *Coordinator
	pids    atomic.Int64
}

func newEnv(t *testing.T, edit ...func(*Config)) *env {
	t.Helper()
	e := &env{t: t, log: newMemLog(), markers: &fakeMarkers{}, clk: clock.NewManual(time.UnixMilli(1_000_000))}
	e.pids.Store(1000)
	img := raftmeta.EmptyImage()
	for name, leader := range map[string]int32{"a": 1, "b": 2, Topic: 1} {
		parts := 2
		if name == Topic {
			parts = testNumPartitions
		}
		topic := &raftmeta.Topic{Name: name}
		for i := range parts {
			topic.Partitions = append(topic.Partitions, &raftmeta.Partition{Topic: name, Index: int32(i), Leader: leader})
		}
		img.Topics[name] = topic
	}
	cfg := Config{Log: e.log, Image: func() *raftmeta.Image { return img }, Markers: e.markers,
		ProducerID:    func(context.Context) (int64, error) { return e.pids.Add(1), nil },
		NumPartitions: testNumPartitions, MarkerRetryBackoff: 5 * time.Millisecond,
		AbortInterval: time.Hour, RemoveInterval: time.Hour, Clock: e.clk}
	for _, f := range edit {
		f(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	t.Cleanup(c.Close)
	return e
}

// elect makes the coordinator lead every partition at epoch and waits for
// them to load.
func (e *env) elect(epoch int32) {
	e.t.Helper()
	for p := range int32(testNumPartitions) {
		e.c.OnElection(p, epoch)
	}
	e.waitFor("partitions loaded", func() bool { return len(e.c.loadedShards()) == testNumPartitions })
}

func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (e *env) init(id string, timeoutMs int32) (int64, int16, int16) {
	e.t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = 4, &id, timeoutMs
	req.ProducerID, req.ProducerEpoch = -1, -1
	r := e.c.InitProducerID(context.Background(), req)
	return r.ProducerID, r.ProducerEpoch, r.ErrorCode
}

func (e *env) add(id string, pid int64, epoch int16, tps ...storage.TopicPartition) map[storage.TopicPartition]int16 {
	e.t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, pid, epoch
	byTopic := map[string]int{}
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			i = len(req.Topics)
			byTopic[tp.Topic] = i
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic = tp.Topic
			req.Topics = append(req.Topics, rt)
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.Partition)
	}
	resp := e.c.AddPartitionsToTxn(context.Background(), req)
	out := map[storage.TopicPartition]int16{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[storage.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.ErrorCode
		}
	}
	return out
}

// addOK adds partitions and fails the test unless every one succeeded.
func (e *env) addOK(id string, pid int64, epoch int16, tps ...storage.TopicPartition) {
	e.t.Helper()
	for tp, code := range e.add(id, pid, epoch, tps...) {
		if code != 0 {
			e.t.Fatalf("AddPartitionsToTxn %s: %s", tp, kerr.ErrorForCode(code))
		}
	}
}

func (e *env) end(id string, pid int64, epoch int16, commit bool) int16 {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = 3, id, pid, epoch, commit
	return e.c.EndTxn(context.Background(), req).ErrorCode
}

// describe is id's state and partitions as DescribeTransactions answers.
func (e *env) describe(id string) string {
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	st := e.c.DescribeTransactions(context.Background(), req).TransactionStates[0]
	if st.ErrorCode != 0 {
		return kerr.ErrorForCode(st.ErrorCode).Error()
	}
	out := fmt.Sprintf("%s pid=%d epoch=%d", st.State, st.ProducerID, st.ProducerEpoch)
	for _, t := range st.Topics {
		out += fmt.Sprintf(" %s%v", t.Topic, t.Partitions)
	}
	return out
}

func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).Error()
}
