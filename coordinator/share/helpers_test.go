package share

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime/runtimetest"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
)

// testLog is __share_group_state on real storage.Logs in memory
// (runtimetest.StorageLog), with DeleteRecords, reads from the log start
// as the broker's coordinatorLog does, and faults on demand.
type testLog struct {
	*runtimetest.StorageLog

	mu sync.Mutex
	// failAppends fails the next appends with these errors.
	failAppends []error
	// readGate, when set, holds reads until it is closed.
	readGate chan struct{}
}

func newTestLog(t *testing.T, clk clock.Clock) *testLog {
	return &testLog{StorageLog: runtimetest.NewStorageLog(t, Topic, clk)}
}

func (l *testLog) Append(ctx context.Context, p int32, batch []byte) (int64, error) {
	l.mu.Lock()
	if len(l.failAppends) > 0 {
		err := l.failAppends[0]
		l.failAppends = l.failAppends[1:]
		l.mu.Unlock()
		return 0, err
	}
	l.mu.Unlock()
	return l.StorageLog.Append(ctx, p, batch)
}

func (l *testLog) Read(ctx context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
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
	return l.StorageLog.Read(ctx, p, max(from, l.Partition(p).LogStartOffset()), maxBytes)
}

func (l *testLog) DeleteRecords(_ context.Context, p int32, offset int64) error {
	_, err := l.Partition(p).MaybeIncrementLogStartOffset(offset)
	return err
}

// records are partition p's records from its log start: "snapshot",
// "update" or "tombstone" and the share-partition.
func (l *testLog) records(t *testing.T, p int32) []string {
	t.Helper()
	var out []string
	log := l.Partition(p)
	data, _, _, err := l.Read(context.Background(), p, log.LogStartOffset(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	it := record.NewIter(data)
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		rr := record.NewUncompressedReader(b)
		for rr.Remaining() > 0 {
			rec, err := rr.Next(true)
			if err != nil {
				t.Fatal(err)
			}
			r, err := decodeRecord(rec)
			if err != nil {
				t.Fatal(err)
			}
			kind := map[int16]string{recordTypeSnapshot: "snapshot", recordTypeUpdate: "update"}[r.typ]
			if r.tombstone {
				kind = "tombstone"
			}
			out = append(out, fmt.Sprintf("%s %s", kind, r.key))
		}
	}
	return out
}

// topicA and topicB are the data topics of the tests: 4 partitions each.
var (
	topicA = raftmeta.Uuid{0xa}
	topicB = raftmeta.Uuid{0xb}
)

// testImage has topicA and topicB.
func testImage() *raftmeta.Image {
	img := raftmeta.EmptyImage()
	for name, id := range map[string]raftmeta.Uuid{"a": topicA, "b": topicB} {
		t := &raftmeta.Topic{Name: name, ID: id}
		for i := range int32(4) {
			t.Partitions = append(t.Partitions, &raftmeta.Partition{Topic: name, TopicID: id, Index: i, Leader: 1})
		}
		img.Topics[name], img.TopicsByID[id] = t, t
	}
	return img
}

// harness is a coordinator leading every partition of a
// __share_group_state of numPartitions partitions.
type harness struct {
	t     *testing.T
	log   *testLog
	clock *clock.Manual
	cfg   Config
	c     *Coordinator
	epoch int32
	mu    sync.Mutex
	image *raftmeta.Image
}

const testPartitions = 3

func newHarness(t *testing.T, tune func(*Config)) *harness {
	h := &harness{t: t, clock: clock.NewManual(time.UnixMilli(1_700_000_000_000)), image: testImage()}
	h.log = newTestLog(t, h.clock)
	h.cfg = Config{
		Log:                              h.log,
		Image:                            h.currentImage,
		NumPartitions:                    testPartitions,
		SnapshotUpdateRecordsPerSnapshot: 3,
		PruneInterval:                    time.Hour,
		ColdPartitionSnapshotInterval:    time.Hour,
		Clock:                            h.clock,
	}
	if tune != nil {
		tune(&h.cfg)
	}
	h.start()
	return h
}

func (h *harness) currentImage() *raftmeta.Image {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.image
}

func (h *harness) setImage(img *raftmeta.Image) {
	h.mu.Lock()
	h.image = img
	h.mu.Unlock()
}

// start builds a coordinator over the log and elects it leader of every
// partition, at the next epoch, and waits until they are loaded.
func (h *harness) start() {
	h.t.Helper()
	c, err := New(h.cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.c = c
	h.t.Cleanup(c.Close)
	h.epoch++
	for p := range int32(testPartitions) {
		c.OnElection(p, h.epoch)
	}
	h.waitLoaded()
}

// flush waits until every write queued so far is appended (or failed).
func (h *harness) flush() {
	for _, s := range h.c.shards.Shards() {
		s.mu.Lock()
		done := s.commitLocked(nil)
		s.mu.Unlock()
		<-done
	}
}

// restart waits for the queued writes, closes the coordinator and starts
// a new one on the same log, which replays it.
func (h *harness) restart() {
	h.t.Helper()
	h.flush()
	h.c.Close()
	h.start()
}

func (h *harness) waitLoaded() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p := range int32(testPartitions) {
		for {
			s, ok := h.c.shards.Lookup(p)
			if ok {
				s.mu.Lock()
				state := s.state
				s.mu.Unlock()
				if state == shardActive {
					break
				}
			}
			if time.Now().After(deadline) {
				h.t.Fatalf("partition %d not loaded", p)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// snapshotStates is every share-partition's state, as the shards hold it.
func (h *harness) snapshotStates() map[Key]partitionState {
	out := map[Key]partitionState{}
	for _, s := range h.c.shards.Shards() {
		s.mu.Lock()
		for k, st := range s.states {
			out[k] = *st
		}
		s.mu.Unlock()
	}
	return out
}

func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

// initialize initializes one share-partition and returns its error code.
func (h *harness) initialize(k Key, stateEpoch int32, start int64) int16 {
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.GroupID = k.GroupID
	t := kmsg.NewInitializeShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.StartOffset = k.Partition, stateEpoch, start
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp := h.c.InitializeShareGroupState(h.ctx(), req)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// write writes one share-partition's state and returns its error code.
func (h *harness) write(k Key, stateEpoch, leaderEpoch int32, start int64, batches ...StateBatch) int16 {
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.Version = 1
	req.GroupID = k.GroupID
	t := kmsg.NewWriteShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.LeaderEpoch, p.StartOffset = k.Partition, stateEpoch, leaderEpoch, start
	p.DeliveryCompleteCount = int32(len(batches))
	for _, b := range batches {
		sb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
		sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount
		p.StateBatches = append(p.StateBatches, sb)
	}
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp := h.c.WriteShareGroupState(h.ctx(), req)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// read reads one share-partition's state.
func (h *harness) read(k Key, leaderEpoch int32) kmsg.ReadShareGroupStateResponseTopicPartition {
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = k.GroupID
	t := kmsg.NewReadShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewReadShareGroupStateRequestTopicPartition()
	p.Partition, p.LeaderEpoch = k.Partition, leaderEpoch
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return h.c.ReadShareGroupState(h.ctx(), req).Topics[0].Partitions[0]
}

// summary reads one share-partition's summary.
func (h *harness) summary(k Key) kmsg.ReadShareGroupStateSummaryResponseTopicPartition {
	req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	req.Version = 1
	req.GroupID = k.GroupID
	t := kmsg.NewReadShareGroupStateSummaryRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewReadShareGroupStateSummaryRequestTopicPartition()
	p.Partition = k.Partition
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return h.c.ReadShareGroupStateSummary(h.ctx(), req).Topics[0].Partitions[0]
}

// remove deletes one share-partition's state and returns its error code.
func (h *harness) remove(k Key) int16 {
	req := kmsg.NewPtrDeleteShareGroupStateRequest()
	req.GroupID = k.GroupID
	t := kmsg.NewDeleteShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
	p.Partition = k.Partition
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return h.c.DeleteShareGroupState(h.ctx(), req).Topics[0].Partitions[0].ErrorCode
}

// batchesOf converts a read's state batches.
func batchesOf(rp kmsg.ReadShareGroupStateResponseTopicPartition) []StateBatch {
	var out []StateBatch
	for _, b := range rp.StateBatches {
		out = append(out, StateBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset, DeliveryState: b.DeliveryState, DeliveryCount: b.DeliveryCount})
	}
	return out
}
