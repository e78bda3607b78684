package replication

import (
	"context"
	"fmt"
	"io"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

const localNode = int32(1)

// harness is a ReplicaManager over a real LogManager in t.TempDir(), fed
// hand-built metadata images (no raft).
type harness struct {
	t       testing.TB
	dir     string
	fs      vfs.FS
	clock   *clock.Manual
	logs    *storage.LogManager
	rm      *ReplicaManager
	img     *raftmeta.Image
	metrics *testMetrics
	events  *eventLog
	nextID  byte
}

type harnessOption func(*Config)

func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	return newHarnessFS(t, vfs.OS{}, t.TempDir(), opts...)
}

func newHarnessFS(t testing.TB, fsys vfs.FS, dir string, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{t: t, dir: dir, fs: fsys, clock: clock.NewManual(time.UnixMilli(1_700_000_000_000)),
		metrics: &testMetrics{in: map[string]int64{}, out: map[string]int64{}, msgs: map[string]int64{}}, events: &eventLog{}}
	h.img = raftmeta.EmptyImage()
	h.img.Brokers[localNode] = &raftmeta.Broker{ID: localNode, Endpoints: []raftmeta.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}}}
	h.img.Brokers[2] = &raftmeta.Broker{ID: 2, Rack: "r2", Endpoints: []raftmeta.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.2", Port: 9093}}}
	h.open(opts...)
	return h
}

// open opens the LogManager and a new ReplicaManager over it.
func (h *harness) open(opts ...harnessOption) {
	h.t.Helper()
	logs, err := storage.OpenManager(h.dir, storage.ManagerOptions{FS: h.fs, Clock: h.clock, Scheduler: storage.InlineScheduler{},
		DefaultConfig: storage.DefaultLogConfig()})
	if err != nil {
		h.t.Fatal(err)
	}
	cfg := Config{NodeID: localNode, Logs: logs, Clock: h.clock, Metrics: h.metrics, DialLeader: kclientLeader(nil),
		MinInsyncReplicasFor: func(topic string, img *raftmeta.Image) int32 {
			if v, ok := img.TopicConfig(topic)["min.insync.replicas"]; ok {
				var n int32
				fmt.Sscan(v, &n)
				return n
			}
			return 1
		}}
	for _, o := range opts {
		o(&cfg)
	}
	rm, err := NewReplicaManager(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.logs, h.rm = logs, rm
	rm.OnLeadershipChange(h.events.record)
	h.t.Cleanup(h.close)
}

func (h *harness) close() {
	if h.rm != nil {
		h.rm.Stop()
		h.rm = nil
	}
	if h.logs != nil {
		if err := h.logs.Close(); err != nil {
			h.t.Errorf("closing the log manager: %v", err)
		}
		h.logs = nil
	}
}

// cloneImage copies the maps of an image so a test can change it; the
// values are replaced, never mutated.
func cloneImage(img *raftmeta.Image) *raftmeta.Image {
	n := *img
	n.Brokers = maps.Clone(img.Brokers)
	n.Topics = maps.Clone(img.Topics)
	n.TopicsByID = maps.Clone(img.TopicsByID)
	n.Configs = maps.Clone(img.Configs)
	n.Offset++
	return &n
}

// apply publishes img with delta d.
func (h *harness) apply(d *raftmeta.Delta, img *raftmeta.Image) {
	h.img = img
	h.rm.ApplyDelta(d, img)
}

type topicSpec struct {
	partitions int
	replicas   []int32
	isr        []int32
	leader     int32
	epoch      int32
	configs    map[string]string
}

// createTopic adds a topic led by this node (unless spec says otherwise).
func (h *harness) createTopic(name string, spec topicSpec) *raftmeta.Topic {
	h.t.Helper()
	if spec.partitions == 0 {
		spec.partitions = 1
	}
	if spec.replicas == nil {
		spec.replicas = []int32{localNode}
	}
	if spec.isr == nil {
		spec.isr = spec.replicas
	}
	if spec.leader == 0 {
		spec.leader = localNode
	}
	h.nextID++
	t := &raftmeta.Topic{Name: name, ID: raftmeta.Uuid{0xAA, h.nextID}}
	d := &raftmeta.Delta{CreatedTopics: []*raftmeta.Topic{t}}
	for i := 0; i < spec.partitions; i++ {
		p := &raftmeta.Partition{Topic: name, TopicID: t.ID, Index: int32(i), Replicas: spec.replicas, ISR: spec.isr,
			Leader: spec.leader, LeaderEpoch: spec.epoch, PartitionEpoch: 0}
		t.Partitions = append(t.Partitions, p)
		d.ChangedPartitions = append(d.ChangedPartitions, p)
	}
	img := cloneImage(h.img)
	img.Topics[name], img.TopicsByID[t.ID] = t, t
	if spec.configs != nil {
		img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceTopic, Name: name}] = spec.configs
		d.ChangedConfigs = append(d.ChangedConfigs, raftmeta.ConfigResource{Type: raftmeta.ConfigResourceTopic, Name: name})
	}
	h.apply(d, img)
	return t
}

// changePartition replaces a partition's leadership (a PartitionChangeRecord).
func (h *harness) changePartition(topic string, index int32, f func(p *raftmeta.Partition)) {
	h.t.Helper()
	old := h.img.Topics[topic]
	nt := *old
	nt.Partitions = append([]*raftmeta.Partition(nil), old.Partitions...)
	np := *nt.Partitions[index]
	f(&np)
	np.PartitionEpoch++
	nt.Partitions[index] = &np
	img := cloneImage(h.img)
	img.Topics[topic], img.TopicsByID[nt.ID] = &nt, &nt
	h.apply(&raftmeta.Delta{ChangedPartitions: []*raftmeta.Partition{&np}}, img)
}

func (h *harness) deleteTopic(name string) {
	h.t.Helper()
	t := h.img.Topics[name]
	img := cloneImage(h.img)
	delete(img.Topics, name)
	delete(img.TopicsByID, t.ID)
	delete(img.Configs, raftmeta.ConfigResource{Type: raftmeta.ConfigResourceTopic, Name: name})
	h.apply(&raftmeta.Delta{DeletedTopics: []*raftmeta.Topic{t}}, img)
}

func (h *harness) setTopicConfig(name string, cfg map[string]string) {
	h.t.Helper()
	img := cloneImage(h.img)
	cr := raftmeta.ConfigResource{Type: raftmeta.ConfigResourceTopic, Name: name}
	img.Configs[cr] = cfg
	h.apply(&raftmeta.Delta{ChangedConfigs: []raftmeta.ConfigResource{cr}}, img)
}

func (h *harness) partition(topic string, index int32) *Partition {
	h.t.Helper()
	p, ok := h.rm.Partition(storage.TopicPartition{Topic: topic, Partition: index})
	if !ok {
		h.t.Fatalf("no local partition %s-%d", topic, index)
	}
	return p
}

// batch builds a client batch of n records with values "<prefix>-<i>".
func (h *harness) batch(prefix string, n int) []byte {
	return h.batchSpec(record.BatchSpec{}, prefix, n, 0)
}

func (h *harness) batchSpec(spec record.BatchSpec, prefix string, n, pad int) []byte {
	h.t.Helper()
	if spec.BaseTimestamp == 0 {
		spec.BaseTimestamp = h.clock.Now().UnixMilli()
	}
	if spec.ProducerID == 0 && spec.ProducerEpoch == 0 && spec.BaseSequence == 0 {
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = record.NoProducerID, record.NoProducerEpoch, record.NoSequence
	}
	spec.PartitionLeaderEpoch = -1
	recs := make([]record.Record, n)
	for i := range recs {
		v := []byte(fmt.Sprintf("%s-%d", prefix, i))
		v = append(v, make([]byte, pad)...)
		recs[i] = record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v)), TimestampDelta: int64(i)}
	}
	b, err := record.Build(spec, recs, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

func produceReq(version, acks int16, topic string, partition int32, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, acks, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// produce sends one batch with acks and returns the partition's answer.
func (h *harness) produce(acks int16, topic string, partition int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	h.t.Helper()
	resp := h.rm.Produce(context.Background(), produceReq(11, acks, topic, partition, batch))
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		h.t.Fatalf("produce response shape: %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// mustProduce produces n records with acks=1 and checks the base offset.
func (h *harness) mustProduce(topic string, partition int32, prefix string, n int, wantBase int64) {
	h.t.Helper()
	sp := h.produce(1, topic, partition, h.batch(prefix, n))
	if sp.ErrorCode != 0 || sp.BaseOffset != wantBase {
		h.t.Fatalf("produce %s-%d: error %d base %d, want 0 and %d", topic, partition, sp.ErrorCode, sp.BaseOffset, wantBase)
	}
}

type fetchPart struct {
	topic          string
	partition      int32
	offset         int64
	maxBytes       int32
	currentEpoch   int32
	lastFetchEpoch int32
}

func fp(topic string, partition int32, offset int64) fetchPart {
	return fetchPart{topic: topic, partition: partition, offset: offset, maxBytes: 1 << 20, currentEpoch: -1, lastFetchEpoch: -1}
}

func fetchReq(version int16, parts ...fetchPart) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.MinBytes, req.MaxWaitMillis = version, -1, 50<<20, 0, 0
	req.SessionEpoch = -1
	req.ReplicaState.ID = -1
	for _, p := range parts {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != p.topic {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = p.topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p.partition, p.offset, p.maxBytes
		rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = p.currentEpoch, p.lastFetchEpoch
		req.Topics[len(req.Topics)-1].Partitions = append(req.Topics[len(req.Topics)-1].Partitions, rp)
	}
	return req
}

func (h *harness) fetch(req *kmsg.FetchRequest) *FetchResult {
	h.t.Helper()
	return h.rm.Fetch(context.Background(), req)
}

// fetchedPartition is one partition of a fetch answer with its data decoded.
type fetchedPartition struct {
	kmsg.FetchResponseTopicPartition
	topic   string
	batches []kmsg.RecordBatch
	offsets []int64
	values  []string
}

// decodeFetch checks the result's shape (Records nil, one slice per
// partition) and decodes every partition's data.
func decodeFetch(t testing.TB, res *FetchResult) []fetchedPartition {
	t.Helper()
	if len(res.Slices) != len(res.Resp.Topics) {
		t.Fatalf("%d slice rows for %d topics", len(res.Slices), len(res.Resp.Topics))
	}
	var out []fetchedPartition
	for i, rt := range res.Resp.Topics {
		if len(res.Slices[i]) != len(rt.Partitions) {
			t.Fatalf("topic %d: %d slices for %d partitions", i, len(res.Slices[i]), len(rt.Partitions))
		}
		for j, rp := range rt.Partitions {
			if rp.RecordBatches != nil {
				t.Fatalf("RecordBatches must be nil; the data is in Slices")
			}
			fpd := fetchedPartition{FetchResponseTopicPartition: rp, topic: rt.Topic}
			s := res.Slices[i][j]
			buf := make([]byte, s.Size)
			if err := s.ReadInto(buf); err != nil {
				t.Fatal(err)
			}
			for len(buf) >= record.HeaderSize {
				b := record.Batch(buf)
				if b.Size() > len(buf) {
					break // a trailing partial batch, as clients drop it
				}
				b = b[:b.Size()]
				var kb kmsg.RecordBatch
				if err := kb.ReadFrom(b); err != nil {
					t.Fatalf("decode batch: %v", err)
				}
				fpd.batches = append(fpd.batches, kb)
				rr, done, err := testDecomp.OpenRecords(b, 1<<30)
				if err != nil {
					t.Fatalf("decode records: %v", err)
				}
				for {
					r, err := rr.Next(true)
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("decode record: %v", err)
					}
					fpd.offsets = append(fpd.offsets, b.BaseOffset()+int64(r.OffsetDelta))
					fpd.values = append(fpd.values, string(r.Value))
				}
				done()
				buf = buf[b.Size():]
			}
			out = append(out, fpd)
		}
	}
	return out
}

var testDecomp = record.NewDecompressor()

type testMetrics struct {
	mu            sync.Mutex
	in, out, msgs map[string]int64
}

func (m *testMetrics) BytesIn(topic string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.in[topic] += n
}

func (m *testMetrics) MessagesIn(topic string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs[topic] += n
}

func (m *testMetrics) BytesOut(topic string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.out[topic] += n
}

type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) record(tp storage.TopicPartition, leader bool, epoch int32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, fmt.Sprintf("%s leader=%v epoch=%d", tp, leader, epoch))
}

func (e *eventLog) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.events
	e.events = nil
	return out
}
