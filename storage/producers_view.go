package storage

import "github.com/strait-io/strait/storage/producer"

// ActiveProducers returns the state of every producer this log remembers,
// by producer id: epoch, last sequence, last timestamp, the epoch of the
// coordinator that wrote its last transaction marker and the first offset
// of its open transaction (-1 without one). It is what DescribeProducers
// (KIP-664) reports: Kafka's UnifiedLog.activeProducers, on a leader or a
// follower alike. The view is consistent (taken under the producer state's
// lock) but not tied to any offset: an append may land just after it.
//
// A failed log answers its *StorageError and a closed one ErrLogClosed,
// rather than state that may no longer match the log.
func (l *Log) ActiveProducers() ([]producer.ProducerView, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	return l.producers.Producers(), nil
}
