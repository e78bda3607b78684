package txn

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeTransactions: v0. Each id's state from the shard that serves it
// (TransactionCoordinator.handleDescribeTransactions): NOT_COORDINATOR or
// COORDINATOR_LOAD_IN_PROGRESS when this broker does not serve it (yet),
// TRANSACTIONAL_ID_NOT_FOUND when the id is unknown (or being removed).
func (c *Coordinator) DescribeTransactions(_ context.Context, req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse {
	resp := kmsg.NewPtrDescribeTransactionsResponse()
	resp.Version = req.Version
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID = id
		st.ProducerID, st.ProducerEpoch, st.StartTimestamp = -1, -1, -1
		s, e := c.shardOf(id)
		if e == nil {
			s.mu.Lock()
			m := s.txns[id]
			switch {
			case s.closed:
				e = kerr.NotCoordinator
			case m == nil || m.State == Dead:
				e = kerr.TransactionalIDNotFound
			default:
				st.State, st.TimeoutMillis, st.StartTimestamp = m.State.String(), m.TimeoutMs, m.StartMs
				st.ProducerID, st.ProducerEpoch = m.ProducerID, m.ProducerEpoch
				for _, tp := range sortedPartitions(m.Partitions) {
					if n := len(st.Topics); n == 0 || st.Topics[n-1].Topic != tp.Topic {
						t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
						t.Topic = tp.Topic
						st.Topics = append(st.Topics, t)
					}
					st.Topics[len(st.Topics)-1].Partitions = append(st.Topics[len(st.Topics)-1].Partitions, tp.Partition)
				}
			}
			s.mu.Unlock()
		}
		if e != nil {
			st.ErrorCode = e.Code
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp
}

// ListTransactions: v0-2. The transactional ids of every partition this
// broker serves, filtered (TransactionStateManager.listTransactionStates):
// by state names (unknown names are listed back in
// UnknownStateFilters), producer ids, v1+ how long the transaction has run
// (longer than DurationFilterMillis, when it is not negative) and v2+ a
// transactional id pattern (a regular expression matching the whole id;
// an invalid one is INVALID_REGULAR_EXPRESSION). While a partition loads
// the answer is COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) ListTransactions(_ context.Context, req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse {
	resp := kmsg.NewPtrListTransactionsResponse()
	resp.Version = req.Version
	states := map[State]bool{}
	for _, name := range req.StateFilters {
		st, err := kmsg.ParseTransactionState(name)
		if err != nil || st.String() != name {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
			continue
		}
		states[st] = true
	}
	var pattern *regexp.Regexp
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := regexp.Compile("^(?:" + *req.TransactionalIDPattern + ")$")
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return resp
		}
		pattern = re
	}
	duration := int64(-1)
	if req.Version >= 1 {
		duration = req.DurationFilterMillis
	}
	now := c.nowMs()
	for _, s := range c.reg.Shards() {
		s.mu.Lock()
		if !s.loaded && !s.closed {
			s.mu.Unlock()
			resp.ErrorCode, resp.TransactionStates = kerr.CoordinatorLoadInProgress.Code, nil
			return resp
		}
		for id, m := range s.txns {
			switch {
			case s.closed, m.State == Dead:
			case len(req.ProducerIDFilters) > 0 && !slices.Contains(req.ProducerIDFilters, m.ProducerID):
			case len(req.StateFilters) > 0 && !states[m.State]:
			case duration >= 0 && now-m.StartMs <= duration:
			case pattern != nil && !pattern.MatchString(id):
			default:
				ts := kmsg.NewListTransactionsResponseTransactionState()
				ts.TransactionalID, ts.ProducerID, ts.TransactionState = id, m.ProducerID, m.State.String()
				resp.TransactionStates = append(resp.TransactionStates, ts)
			}
		}
		s.mu.Unlock()
	}
	slices.SortFunc(resp.TransactionStates, func(a, b kmsg.ListTransactionsResponseTransactionState) int {
		return strings.Compare(a.TransactionalID, b.TransactionalID)
	})
	return resp
}
