package fetcher

import (
	"slices"
	"sync"

	"github.com/strait-io/strait/storage"
)

// FailedPartitions are the partitions a fetcher gave up on (Kafka's
// FailedPartitions): a storage error, an unexpected error, or a leader
// that fenced the replica's epoch. They stay out of fetching until the
// replica manager adds them again, normally with a new leader epoch.
type FailedPartitions struct {
	mu  sync.Mutex
	set map[storage.TopicPartition]struct{}
}

func (f *FailedPartitions) add(tp storage.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.set == nil {
		f.set = map[storage.TopicPartition]struct{}{}
	}
	f.set[tp] = struct{}{}
}

func (f *FailedPartitions) remove(tps ...storage.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, tp := range tps {
		delete(f.set, tp)
	}
}

// Contains reports whether tp failed.
func (f *FailedPartitions) Contains(tp storage.TopicPartition) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.set[tp]
	return ok
}

// Partitions returns the failed partitions, sorted.
func (f *FailedPartitions) Partitions() []storage.TopicPartition {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]storage.TopicPartition, 0, len(f.set))
	for tp := range f.set {
		out = append(out, tp)
	}
	slices.SortFunc(out, compareTP)
	return out
}

func compareTP(a, b storage.TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}
