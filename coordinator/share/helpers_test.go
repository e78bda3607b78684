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
	rp, _ := InitializeResult(h.c.InitializeShareGroupState(h.ctx(), InitializeRequest(k, stateEpoch, start)))
	return rp.ErrorCode
}

// write writes one share-partition's state, with as many delivery
// complete records as batches (to tell summaries apart), and returns its
// error code.
func (h *harness) write(k Key, stateEpoch, leaderEpoch int32, start int64, batches ...StateBatch) int16 {
	req := WriteRequest(k, stateEpoch, leaderEpoch, start, batches)
	req.Version = 1
	req.Topics[0].Partitions[0].DeliveryCompleteCount = int32(len(batches))
	rp, _ := WriteResult(h.c.WriteShareGroupState(h.ctx(), req))
	return rp.ErrorCode
}

// read reads one share-partition's state.
func (h *harness) read(k Key, leaderEpoch int32) kmsg.ReadShareGroupStateResponseTopicPartition {
	rp, _ := ReadResult(h.c.ReadShareGroupState(h.ctx(), ReadRequest(k, leaderEpoch)))
	return rp
}

// summary reads one share-partition's summary.
func (h *harness) summary(k Key) kmsg.ReadShareGroupStateSummaryResponseTopicPartition {
	req := SummaryRequest(k)
	req.Version = 1
	rp, _ := SummaryResult(h.c.ReadShareGroupStateSummary(h.ctx(), req))
	return rp
}

// remove deletes one share-partition's state and returns its error code.
func (h *harness) remove(k Key) int16 {
	rp, _ := DeleteResult(h.c.DeleteShareGroupState(h.ctx(), DeleteRequest(k)))
	return rp.ErrorCode
}
