package fetcher

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

var tp0 = storage.TopicPartition{Topic: "t", Partition: 0}

func newClock() *clock.Manual { return clock.NewManual(time.UnixMilli(1_700_000_000_000)) }

// newLog opens an empty log on an in-memory filesystem.
func newLog(t *testing.T, c clock.Clock) *storage.Log {
	t.Helper()
	l, _, err := storage.Open("/data/t-0", storage.Options{FS: vfs.NewMem(), Clock: c,
		Scheduler: storage.InlineScheduler{}, Config: storage.DefaultLogConfig()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// batches builds replicated batches from a spec like "0-1:e1 2-3:e2": one
// batch per range, records valued "v<offset>".
func batches(t *testing.T, spec string) []byte {
	t.Helper()
	var out []byte
	for _, part := range strings.Fields(spec) {
		var first, last int64
		var epoch int32
		if _, err := fmt.Sscanf(part, "%d-%d:e%d", &first, &last, &epoch); err != nil {
			if _, err := fmt.Sscanf(part, "%d:e%d", &first, &epoch); err != nil {
				t.Fatalf("bad spec %q: %v", part, err)
			}
			last = first
		}
		var recs []record.Record
		for off := first; off <= last; off++ {
			v := []byte("v" + strconv.FormatInt(off, 10))
			recs = append(recs, record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v))})
		}
		b, err := record.Build(record.BatchSpec{BaseOffset: first, PartitionLeaderEpoch: epoch, ProducerID: record.NoProducerID,
			ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence, BaseTimestamp: 1_700_000_000_000}, recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

// logWith opens a log holding spec.
func logWith(t *testing.T, c clock.Clock, spec string) *storage.Log {
	t.Helper()
	l := newLog(t, c)
	if spec != "" {
		if _, err := l.AppendAsFollower(batches(t, spec)); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// mockEndPoint answers with the functions a test sets and records what
// it was asked.
type mockEndPoint struct {
	mu       sync.Mutex
	leader   BrokerEndPoint
	noTrunc  bool
	fetch    func(req *FetchRequest) (map[storage.TopicPartition]*FetchData, error)
	epochs   func(parts map[storage.TopicPartition]EpochRequest) (map[storage.TopicPartition]EpochEndOffset, error)
	offsets  func(tp storage.TopicPartition, ts int64) (OffsetAndEpoch, error)
	fetches  []*FetchRequest
	epochReq []map[storage.TopicPartition]EpochRequest
	closed   bool
}

func (m *mockEndPoint) Broker() BrokerEndPoint             { return m.leader }
func (m *mockEndPoint) IsTruncationOnFetchSupported() bool { return !m.noTrunc }
func (m *mockEndPoint) BuildFetch(parts []FetchPartition) *FetchRequest {
	r := &FetchRequest{Partitions: map[storage.TopicPartition]FetchPartition{}}
	for _, p := range parts {
		r.Partitions[p.TP] = p
	}
	return r
}

func (m *mockEndPoint) Fetch(_ context.Context, req *FetchRequest) (map[storage.TopicPartition]*FetchData, error) {
	m.mu.Lock()
	m.fetches = append(m.fetches, req)
	f := m.fetch
	m.mu.Unlock()
	return f(req)
}

func (m *mockEndPoint) FetchEpochEndOffsets(_ context.Context, parts map[storage.TopicPartition]EpochRequest) (map[storage.TopicPartition]EpochEndOffset, error) {
	m.mu.Lock()
	m.epochReq = append(m.epochReq, parts)
	f := m.epochs
	m.mu.Unlock()
	return f(parts)
}

func (m *mockEndPoint) FetchEarliestOffset(_ context.Context, tp storage.TopicPartition, _ int32) (OffsetAndEpoch, error) {
	return m.offsets(tp, storage.EarliestTimestamp)
}

func (m *mockEndPoint) FetchLatestOffset(_ context.Context, tp storage.TopicPartition, _ int32) (OffsetAndEpoch, error) {
	return m.offsets(tp, storage.LatestTimestamp)
}

func (m *mockEndPoint) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// data is a fetch answer for one partition.
func data(records []byte, hw, logStart int64) *FetchData {
	d := kmsg.NewFetchResponseTopicPartition()
	d.HighWatermark, d.LogStartOffset, d.RecordBatches = hw, logStart, records
	return &d
}

func errData(code int16) *FetchData {
	d := kmsg.NewFetchResponseTopicPartition()
	d.ErrorCode, d.HighWatermark, d.LogStartOffset = code, -1, -1
	return &d
}

func diverging(epoch int32, end int64) *FetchData {
	d := data(nil, 0, 0)
	d.DivergingEpoch.Epoch, d.DivergingEpoch.EndOffset = epoch, end
	return d
}

// newFetcher builds a fetcher over one replica log.
func newFetcher(ep *mockEndPoint, c clock.Clock, replicas map[storage.TopicPartition]*storage.Log) *Fetcher {
	return New(Config{EndPoint: ep, Clock: c, Backoff: time.Second, Replicas: func(tp storage.TopicPartition) (Replica, error) {
		l, ok := replicas[tp]
		if !ok {
			return nil, fmt.Errorf("no replica %s", tp)
		}
		return l, nil
	}})
}

func mustState(t *testing.T, f *Fetcher, tp storage.TopicPartition) PartitionState {
	t.Helper()
	st, ok := f.State(tp)
	if !ok {
		t.Fatalf("no state for %s", tp)
	}
	return st
}
