package runtimetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// StorageLog is an internal topic whose partitions are real storage.Logs
// on an in-memory file system, as a coordinator sees them through the
// broker's coordinatorLog: appends as the leader with OriginCoordinator
// (so the log checks producer and coordinator epochs as it does for a
// coordinator), the high watermark moved to the log end at once (a single
// replica), reads of whole batches up to the log end. A partition is
// created on first use; the logs are closed when the test ends.
type StorageLog struct {
	t     testing.TB
	topic string
	clock clock.Clock
	fs    vfs.FS

	mu   sync.Mutex
	logs map[int32]*storage.Log
}

// NewStorageLog returns an empty internal topic named topic.
func NewStorageLog(t testing.TB, topic string, clk clock.Clock) *StorageLog {
	s := &StorageLog{t: t, topic: topic, clock: clk, fs: vfs.NewMem(), logs: map[int32]*storage.Log{}}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, l := range s.logs {
			l.Close()
		}
	})
	return s
}

// Partition returns partition p's log, opening it if needed.
func (s *StorageLog) Partition(p int32) *storage.Log {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.logs[p]; l != nil {
		return l
	}
	l, _, err := storage.Open(fmt.Sprintf("/data/%s-%d", s.topic, p), storage.Options{FS: s.fs, Clock: s.clock,
		Scheduler: storage.InlineScheduler{}, Config: storage.DefaultLogConfig()})
	if err != nil {
		s.t.Fatalf("opening %s-%d: %v", s.topic, p, err)
	}
	s.logs[p] = l
	return l
}

// Append appends batch to partition p as its leader, for a coordinator.
func (s *StorageLog) Append(_ context.Context, p int32, batch []byte) (int64, error) {
	l := s.Partition(p)
	info, err := l.AppendAsLeader(batch, 0, record.OriginCoordinator)
	if err != nil {
		return 0, err
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	return info.LastOffset, nil
}

// Read reads whole batches of partition p from from, up to its log end.
func (s *StorageLog) Read(_ context.Context, p int32, from int64, maxBytes int32) ([]byte, int64, int64, error) {
	fd, err := s.Partition(p).Read(from, maxBytes, storage.FetchLogEnd, true)
	if err != nil {
		return nil, 0, 0, err
	}
	data := make([]byte, fd.Records.Size)
	if err := fd.Records.ReadInto(data); err != nil {
		return nil, 0, 0, err
	}
	next := from
	it := record.NewIter(data)
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		next = b.NextOffset()
	}
	return data[:it.Pos()], next, fd.LogEndOffset, nil
}
