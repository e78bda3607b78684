package source

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
)

// Partition error codes sorted by what they make the endpoint do.
func isLeaderError(code int16) bool {
	switch code {
	case kerr.NotLeaderForPartition.Code, kerr.LeaderNotAvailable.Code, kerr.FencedLeaderEpoch.Code,
		kerr.UnknownLeaderEpoch.Code, kerr.ReplicaNotAvailable.Code, kerr.KafkaStorageError.Code,
		kerr.NetworkException.Code:
		return true
	}
	return false
}

func isTopicError(code int16) bool {
	switch code {
	case kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicID.Code, kerr.InconsistentTopicID.Code:
		return true
	}
	return false
}

// coreCode is the code the core gets for a source's partition error. The
// core treats FENCED_LEADER_EPOCH as "my own epoch is stale, wait for new
// metadata" and parks the partition as failed; for a mirror it means the
// source metadata is stale, which the endpoint refreshes, so the core must
// simply retry.
func coreCode(code int16) int16 {
	if code == kerr.FencedLeaderEpoch.Code {
		return kerr.NotLeaderForPartition.Code
	}
	return code
}

// round collects one request's partition errors: those that ask for a
// metadata refresh, and the reports to make once it is done, when a topic
// error can be told apart from a recreated or deleted topic.
type round struct {
	c       *Cluster
	op      string
	topics  []string
	refresh bool
	pending []pendingError
}

type pendingError struct {
	tp     storage.TopicPartition
	broker int32
	code   int16
	err    error // when set, reported as is
}

func (c *Cluster) newRound(op string, topics []string) *round {
	return &round{c: c, op: op, topics: topics}
}

// noRoute reports a partition no request went out for.
func (r *round) noRoute(tp storage.TopicPartition, rt route) {
	r.pending = append(r.pending, pendingError{tp: tp, broker: -1, code: rt.code, err: rt.err})
	if isLeaderError(rt.code) || isTopicError(rt.code) {
		r.refresh = true
	}
}

// sendFailed reports a partition whose request did not come back.
func (r *round) sendFailed(tp storage.TopicPartition, broker int32, err error) {
	r.pending = append(r.pending, pendingError{tp: tp, broker: broker, code: kerr.NetworkException.Code,
		err: fmt.Errorf("%w: %w", kerr.NetworkException, err)})
	r.refresh = true
}

// answered reports a partition error code the source answered.
func (r *round) answered(tp storage.TopicPartition, broker int32, code int16) {
	r.pending = append(r.pending, pendingError{tp: tp, broker: broker, code: code})
	if isLeaderError(code) || isTopicError(code) {
		r.refresh = true
	}
}

// finish refreshes the metadata when an error asked for it (so the core's
// retry goes to the new leader) and reports every error; a topic error is
// reported as what the fresh metadata says it is (ErrSourceTopicRecreated,
// ErrSourceTopicNotFound, ErrSourcePartitionNotFound) when it is one of
// those, and as the source's code otherwise (metadata propagating).
func (r *round) finish(ctx context.Context) {
	if r.refresh {
		r.c.markStale()
		if err := r.c.ensure(ctx, r.topics); err != nil {
			r.c.logger.Debug("source metadata refresh after errors failed", "err", err)
		}
	}
	for _, p := range r.pending {
		err := p.err
		if isTopicError(p.code) {
			r.c.mu.Lock()
			rt := r.c.routeLocked(p.tp, r.c.expected[p.tp.Topic])
			r.c.mu.Unlock()
			if IsFatal(rt.err) {
				err = rt.err
			}
		}
		if err == nil {
			err = kerr.ErrorForCode(p.code)
		}
		r.c.recordError(&PartitionError{TP: p.tp, Op: r.op, Broker: p.broker, Err: err})
	}
}

// reportAll reports a request that could not start (the source metadata
// could not be loaded) against each of its partitions, so describe shows
// why they do not move.
func (c *Cluster) reportAll(ctx context.Context, tps []storage.TopicPartition, op string, err error) {
	if ctx.Err() != nil {
		return // the fetcher is stopping, nothing went wrong
	}
	for _, tp := range tps {
		c.recordError(&PartitionError{TP: tp, Op: op, Broker: -1, Err: err})
	}
}

func keys[V any](m map[storage.TopicPartition]V) []storage.TopicPartition {
	out := make([]storage.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	return out
}

func topicsOf[V any](m map[storage.TopicPartition]V) []string {
	seen := map[string]struct{}{}
	var out []string
	for tp := range m {
		if _, ok := seen[tp.Topic]; !ok {
			seen[tp.Topic] = struct{}{}
			out = append(out, tp.Topic)
		}
	}
	return out
}
