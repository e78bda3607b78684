package txn

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// markerJob is a prepared commit or abort whose markers are being
// written: Kafka's TxnMarkerEntry with the TxnLogAppend that follows.
type markerJob struct {
	id         string
	producerID int64
	epoch      int16
	commit     bool
	partitions []storage.TopicPartition
	complete   Transit // the CompleteCommit or CompleteAbort to append once done
}

// finish writes the job's markers, every partition's to its current
// leader, retrying those that failed, and then appends the completion
// (TransactionMarkerChannelManager and its completion handler). It gives
// up when the shard stops (its successor loads the prepared state and
// starts over) or when a leader says this coordinator is a zombie
// (TRANSACTION_COORDINATOR_FENCED, INVALID_PRODUCER_EPOCH: a newer
// coordinator or producer epoch already wrote there).
func (s *shard) finish(job markerJob) {
	pending := map[storage.TopicPartition]struct{}{}
	for _, tp := range job.partitions {
		pending[tp] = struct{}{}
	}
	for len(pending) > 0 {
		fenced := s.sendMarkers(job, pending)
		if fenced {
			s.c.log.Warn("a partition leader fenced this coordinator's transaction markers; leaving the transaction to its newer coordinator",
				"transactional_id", job.id, "shard", s.String())
			return
		}
		if len(pending) == 0 || !s.sleep(s.c.cfg.MarkerRetryBackoff) {
			break
		}
	}
	if s.ctx.Err() != nil {
		return
	}
	for {
		err := s.appendTransit(job.id, job.complete)
		if err == nil {
			s.completed(job)
			return
		}
		if err == kerr.NotCoordinator {
			return
		}
		s.c.log.Warn("appending a transaction's completion failed; retrying", "transactional_id", job.id, "err", err)
		if !s.sleep(s.c.cfg.MarkerRetryBackoff) {
			return
		}
	}
}

// completed makes the appended completion current.
func (s *shard) completed(job markerJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.changedLocked()
	m := s.txns[job.id]
	if s.closed || m == nil {
		return
	}
	if err := m.Complete(job.complete); err != nil {
		s.c.log.Error("completing a transaction failed", "transactional_id", job.id, "err", err)
	}
}

// sleep waits d, or reports false when the shard stops first.
func (s *shard) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// sendMarkers sends one WriteTxnMarkers per leader of the pending
// partitions, in parallel, and removes from pending the partitions that
// have their marker, or that no longer exist (their topic was deleted:
// nothing to mark). It reports whether a leader fenced the coordinator.
func (s *shard) sendMarkers(job markerJob, pending map[storage.TopicPartition]struct{}) (fenced bool) {
	img := s.c.cfg.Image()
	byLeader := map[int32][]storage.TopicPartition{}
	for tp := range pending {
		p, ok := img.Partition(tp.Topic, tp.Partition)
		if !ok {
			delete(pending, tp)
			continue
		}
		if p.Leader >= 0 {
			byLeader[p.Leader] = append(byLeader[p.Leader], tp)
		}
	}
	var mu sync.Mutex
	mark := func(leader int32, tps []storage.TopicPartition) {
		done, fence := s.markLeader(job, leader, tps)
		mu.Lock()
		defer mu.Unlock()
		for _, tp := range done {
			delete(pending, tp)
		}
		fenced = fenced || fence
	}
	if len(byLeader) == 1 {
		// One leader (every partition on one broker, as with one
		// partition or one broker): its markers are written here. A
		// goroutine for it, with this one parked until it ended, ran
		// nothing in parallel and cost every transaction a wake-up of an
		// idle thread and a fresh stack grown through the append path.
		for leader, tps := range byLeader {
			mark(leader, tps)
		}
		return fenced
	}
	var wg sync.WaitGroup
	for leader, tps := range byLeader {
		wg.Go(func() { mark(leader, tps) })
	}
	wg.Wait()
	return fenced
}

// markLeader writes the markers of tps, led by leader, and returns those
// written, and whether the leader fenced this coordinator.
func (s *shard) markLeader(job markerJob, leader int32, tps []storage.TopicPartition) (done []storage.TopicPartition, fenced bool) {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = job.producerID, job.epoch, job.commit, s.epoch
	byTopic := map[string]int{}
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			i = len(mk.Topics)
			byTopic[tp.Topic] = i
			t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			t.Topic = tp.Topic
			mk.Topics = append(mk.Topics, t)
		}
		mk.Topics[i].Partitions = append(mk.Topics[i].Partitions, tp.Partition)
	}
	req.Markers = append(req.Markers, mk)
	ctx, cancel := context.WithTimeout(s.ctx, s.c.cfg.RequestTimeout)
	defer cancel()
	resp, err := s.c.cfg.Markers.WriteTxnMarkers(ctx, leader, req)
	if err != nil {
		if s.ctx.Err() == nil {
			s.c.log.Debug("writing transaction markers failed; retrying", "transactional_id", job.id, "leader", leader, "err", err)
		}
		return nil, false
	}
	for _, m := range resp.Markers {
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				tp := storage.TopicPartition{Topic: t.Topic, Partition: p.Partition}
				switch err := kerr.ErrorForCode(p.ErrorCode); err {
				case nil, kerr.UnsupportedForMessageFormat:
					done = append(done, tp)
				case kerr.TransactionCoordinatorFenced, kerr.InvalidProducerEpoch:
					fenced = true
				default:
					s.c.log.Debug("a transaction marker failed; retrying", "transactional_id", job.id, "partition", tp.String(),
						"leader", leader, "err", err)
				}
			}
		}
	}
	return done, fenced
}
