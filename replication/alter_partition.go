package replication

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// alterPartitionTimeout bounds one AlterPartition exchange; the
// controller channel retries within it (NOT_CONTROLLER, reconnects).
const alterPartitionTimeout = 30 * time.Second

// alterPartitionManager sends the partitions' ISR changes to the
// controller (Kafka's AlterPartitionManager): the proposals queued while a
// request is out go together in the next one, so at most one request is in
// flight, and a partition has at most one proposal in it.
type alterPartitionManager struct {
	r *ReplicaManager

	mu       sync.Mutex
	unsent   map[storage.TopicPartition]alterPartitionItem
	inflight bool
}

type alterPartitionItem struct {
	p        *Partition
	proposed *partitionState
}

func newAlterPartitionManager(r *ReplicaManager) *alterPartitionManager {
	return &alterPartitionManager{r: r, unsent: map[storage.TopicPartition]alterPartitionItem{}}
}

// submit queues a proposal, replacing an unsent one of the partition.
func (m *alterPartitionManager) submit(p *Partition, proposed *partitionState) {
	if m.r.cfg.ControllerChannel == nil {
		m.r.logger.Warn("no controller channel: the ISR change stays pending", "partition", p.tp.String())
		return
	}
	m.mu.Lock()
	m.unsent[p.tp] = alterPartitionItem{p: p, proposed: proposed}
	start := !m.inflight
	m.inflight = true
	m.mu.Unlock()
	if start {
		m.r.cfg.Scheduler.Go(func() { m.send(0) })
	}
}

// send sends everything queued, hands each partition its answer and sends
// again if more was queued or some must be retried.
func (m *alterPartitionManager) send(backoff time.Duration) {
	if backoff > 0 {
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-m.r.ctx.Done():
		}
		t.Stop()
	}
	m.mu.Lock()
	items := make([]alterPartitionItem, 0, len(m.unsent))
	for _, tp := range sortedTPs(m.unsent) {
		items = append(items, m.unsent[tp])
	}
	clear(m.unsent)
	m.mu.Unlock()
	if len(items) == 0 || m.r.ctx.Err() != nil {
		m.mu.Lock()
		m.inflight = false
		m.mu.Unlock()
		return
	}
	req := m.buildRequest(items)
	ctx, cancel := context.WithTimeout(m.r.ctx, alterPartitionTimeout)
	resp, err := m.r.cfg.ControllerChannel.AlterPartition(ctx, req)
	cancel()
	var retry []alterPartitionItem
	switch {
	case err != nil:
		m.r.logger.Warn("AlterPartition failed; will retry", "partitions", len(items), "err", err)
		retry = items
	case resp.ErrorCode != 0:
		// STALE_BROKER_EPOCH, NOT_CONTROLLER, ...: Kafka retries them all.
		m.r.logger.Warn("the controller refused AlterPartition; will retry", "code", resp.ErrorCode)
		retry = items
	default:
		for _, it := range items {
			if it.p.completeAlterPartition(it.proposed, findAlterPartitionResult(resp, it)) {
				retry = append(retry, it)
			}
		}
	}
	m.mu.Lock()
	for _, it := range retry {
		if _, newer := m.unsent[it.p.tp]; !newer {
			m.unsent[it.p.tp] = it
		}
	}
	again := len(m.unsent) > 0
	m.inflight = again
	m.mu.Unlock()
	if again {
		next := time.Duration(0)
		if len(retry) > 0 && m.r.cfg.AlterPartitionRetryBackoffMs > 0 {
			next = time.Duration(m.r.cfg.AlterPartitionRetryBackoffMs) * time.Millisecond
		}
		m.r.cfg.Scheduler.Go(func() { m.send(next) })
	}
}

// buildRequest is the AlterPartition request for the items, v3 fields
// (topic ids, ISR members with their broker epochs) and the older ones
// both filled so any version the channel negotiates carries them.
func (m *alterPartitionManager) buildRequest(items []alterPartitionItem) *kmsg.AlterPartitionRequest {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 3
	req.BrokerID, req.BrokerEpoch = m.r.nodeID, m.r.cfg.BrokerEpoch()
	for _, it := range items {
		st := it.proposed
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != it.p.tp.Topic {
			rt := kmsg.NewAlterPartitionRequestTopic()
			rt.Topic, rt.TopicID = it.p.tp.Topic, it.p.topicID
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewAlterPartitionRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = it.p.tp.Partition, st.leaderEpoch, st.partitionEpoch
		rp.NewISR = slices.Clone(st.pending.newIsr)
		for i, id := range st.pending.newIsr {
			e := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
			e.BrokerID, e.BrokerEpoch = id, st.pending.brokerEpochs[i]
			rp.NewEpochISR = append(rp.NewEpochISR, e)
		}
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return req
}

// findAlterPartitionResult finds an item's answer; a partition the answer
// leaves out is an unknown server error, retried (as in Kafka).
func findAlterPartitionResult(resp *kmsg.AlterPartitionResponse, it alterPartitionItem) alterPartitionResult {
	for _, t := range resp.Topics {
		byID := t.TopidID != [16]byte{} && t.TopidID == it.p.topicID
		if !byID && (t.Topic == "" || t.Topic != it.p.tp.Topic) {
			continue
		}
		for _, p := range t.Partitions {
			if p.Partition == it.p.tp.Partition {
				return alterPartitionResult{errorCode: p.ErrorCode, leaderEpoch: p.LeaderEpoch,
					partitionEpoch: p.PartitionEpoch, isr: p.ISR}
			}
		}
	}
	return alterPartitionResult{errorCode: kerr.UnknownServerError.Code}
}

func sortedTPs[V any](m map[storage.TopicPartition]V) []storage.TopicPartition {
	out := make([]storage.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b storage.TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out
}
