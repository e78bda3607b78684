package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/share"
)

// ShareState is a share-partition's durable state as the share-partition
// leader reads and writes it (replication/share's PersistedState): its
// state epoch, the leader epoch of the leader writing it (on a read, the
// epoch the read was made at), its start offset, and the delivery state of
// the in-flight records at or after the start offset.
type ShareState struct {
	StateEpoch  int32
	LeaderEpoch int32
	StartOffset int64
	Batches     []share.StateBatch
	// DeliveryCompleteCount is how many offsets at or past StartOffset
	// are done with (acknowledged or archived), which the share
	// coordinator keeps for DescribeShareGroupOffsets' lag (KIP-1226); -1
	// when not known. Writes only.
	DeliveryCompleteCount int32
}

// ShareStateClient is the share-partition leaders' persister (Kafka's
// DefaultStatePersister and PersisterStateManager): it initializes, reads,
// writes and deletes a share-partition's state in __share_group_state
// through the share coordinator of the share-partition, which it finds as
// FindCoordinator with key type 2 answers (the leader of the key's
// __share_group_state partition, the topic created first if missing). When
// that is this broker it calls its own coordinator; otherwise it sends
// InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState or
// DeleteShareGroupState (keys 83-86) over the inter-broker client.
//
// Like Kafka's persister it finds the coordinator again and retries, with
// backoff, while the coordinator is not there, has moved or is loading
// (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, or a connection that failed), up to
// shareStateAttempts times within ctx. Any other failure is returned at
// once. Errors unwrap to the kerr error the coordinator answered
// (FENCED_STATE_EPOCH, FENCED_LEADER_EPOCH, UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_REQUEST for a read or write of a share-partition never
// initialized...), or to COORDINATOR_NOT_AVAILABLE when the retries ran
// out, and say what the coordinator said.
//
// Its methods have replication/share's Persister shape with this
// package's types; calls may block for as long as ctx allows.
type ShareStateClient struct{ n *Node }

// ShareStateClient returns the node's share-state client.
func (n *Node) ShareStateClient() *ShareStateClient { return &ShareStateClient{n: n} }

// Retries of a call whose coordinator is away: Kafka's
// PersisterStateManager backs off from 100 ms up to 1 s and gives up after
// 5 attempts.
const (
	shareStateAttempts       = 5
	shareStateInitialBackoff = 100 * time.Millisecond
	shareStateMaxBackoff     = time.Second
)

// Initialize starts or resets key's state at stateEpoch, with startOffset
// (-1: where share.auto.offset.reset says, once a leader reads it).
func (c *ShareStateClient) Initialize(ctx context.Context, key share.Key, stateEpoch int32, startOffset int64) error {
	_, err := shareStateCall(ctx, c, key, "initialize", share.InitializeRequest(key, stateEpoch, startOffset),
		(*share.Coordinator).InitializeShareGroupState,
		func(r *kmsg.InitializeShareGroupStateResponse) (int16, *string, bool) {
			rp, ok := share.InitializeResult(r)
			return rp.ErrorCode, rp.ErrorMessage, ok
		})
	return err
}

// Read returns key's state and, at a leaderEpoch newer than the one the
// coordinator recorded, makes this leader the one whose writes count
// (older leaders are then FENCED_LEADER_EPOCH). A share-partition whose
// state was initialized without a start offset reads StartOffset -1.
func (c *ShareStateClient) Read(ctx context.Context, key share.Key, leaderEpoch int32) (ShareState, error) {
	resp, err := shareStateCall(ctx, c, key, "read", share.ReadRequest(key, leaderEpoch),
		(*share.Coordinator).ReadShareGroupState,
		func(r *kmsg.ReadShareGroupStateResponse) (int16, *string, bool) {
			rp, ok := share.ReadResult(r)
			return rp.ErrorCode, rp.ErrorMessage, ok
		})
	if err != nil {
		return ShareState{}, err
	}
	rp, _ := share.ReadResult(resp)
	return ShareState{StateEpoch: rp.StateEpoch, LeaderEpoch: leaderEpoch, StartOffset: rp.StartOffset, Batches: share.ReadBatches(rp)}, nil
}

// Write records key's state as its leader at st.LeaderEpoch sees it: the
// start offset and the state batches, which the coordinator merges over
// what it holds (a later delivery, or a delivery that completed, wins).
func (c *ShareStateClient) Write(ctx context.Context, key share.Key, st ShareState) error {
	req := share.WriteRequest(key, st.StateEpoch, st.LeaderEpoch, st.StartOffset, st.Batches)
	req.Topics[0].Partitions[0].DeliveryCompleteCount = st.DeliveryCompleteCount
	_, err := shareStateCall(ctx, c, key, "write", req,
		(*share.Coordinator).WriteShareGroupState,
		func(r *kmsg.WriteShareGroupStateResponse) (int16, *string, bool) {
			rp, ok := share.WriteResult(r)
			return rp.ErrorCode, rp.ErrorMessage, ok
		})
	return err
}

// ShareStateSummary is ReadShareGroupStateSummary's answer for one
// share-partition: its epochs, start offset (-1 without state) and
// delivery-complete count (-1 when not known).
type ShareStateSummary struct {
	StateEpoch, LeaderEpoch int32
	StartOffset             int64
	DeliveryCompleteCount   int32
}

// Summary reads key's start offset and epochs without fencing anyone
// (what DescribeShareGroupOffsets reports).
func (c *ShareStateClient) Summary(ctx context.Context, key share.Key) (ShareStateSummary, error) {
	resp, err := shareStateCall(ctx, c, key, "summarize", share.SummaryRequest(key),
		(*share.Coordinator).ReadShareGroupStateSummary,
		func(r *kmsg.ReadShareGroupStateSummaryResponse) (int16, *string, bool) {
			rp, ok := share.SummaryResult(r)
			return rp.ErrorCode, rp.ErrorMessage, ok
		})
	if err != nil {
		return ShareStateSummary{}, err
	}
	rp, _ := share.SummaryResult(resp)
	return ShareStateSummary{StateEpoch: rp.StateEpoch, LeaderEpoch: rp.LeaderEpoch, StartOffset: rp.StartOffset, DeliveryCompleteCount: rp.DeliveryCompleteCount}, nil
}

// Delete removes key's state; a share-partition without state is deleted
// already.
func (c *ShareStateClient) Delete(ctx context.Context, key share.Key) error {
	_, err := shareStateCall(ctx, c, key, "delete", share.DeleteRequest(key),
		(*share.Coordinator).DeleteShareGroupState,
		func(r *kmsg.DeleteShareGroupStateResponse) (int16, *string, bool) {
			rp, ok := share.DeleteResult(r)
			return rp.ErrorCode, rp.ErrorMessage, ok
		})
	return err
}

// shareStateCall sends req about key to key's share coordinator: local
// answers it on this broker, the inter-broker client elsewhere. outcome
// reads the one share-partition's answer (ok false: the answer did not
// hold it). It retries while the coordinator is away, as ShareStateClient
// says.
func shareStateCall[Req kmsg.Request, Resp kmsg.Response](
	ctx context.Context, c *ShareStateClient, key share.Key, verb string, req Req,
	local func(*share.Coordinator, context.Context, Req) Resp,
	outcome func(Resp) (code int16, msg *string, ok bool),
) (Resp, error) {
	var zero Resp
	backoff := shareStateInitialBackoff
	var last error
	for attempt := 1; ; attempt++ {
		resp, err := c.send(ctx, key, req, func(sc *share.Coordinator) kmsg.Response { return local(sc, ctx, req) })
		if err == nil {
			r, _ := resp.(Resp)
			code, msg, ok := outcome(r)
			switch {
			case !ok:
				err = fmt.Errorf("%w: the answer does not name the share-partition", kerr.UnknownServerError)
			case code != 0:
				err = &ShareStateError{Err: kerr.ErrorForCode(code), Message: msg}
			default:
				return r, nil
			}
		}
		last = fmt.Errorf("%s share group state of %s: %w", verb, key, err)
		if !shareStateRetriable(err) || attempt == shareStateAttempts {
			return zero, last
		}
		select {
		case <-ctx.Done():
			return zero, fmt.Errorf("%w (%w)", last, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, shareStateMaxBackoff)
	}
}

// send finds key's coordinator and has it answer req: this broker's own
// coordinator through local, another broker over the inter-broker client.
// Failing to reach the coordinator is COORDINATOR_NOT_AVAILABLE.
func (c *ShareStateClient) send(ctx context.Context, key share.Key, req kmsg.Request, local func(*share.Coordinator) kmsg.Response) (kmsg.Response, error) {
	n := c.n
	sc := n.shares
	if sc == nil {
		return nil, kerr.CoordinatorNotAvailable
	}
	node, err := c.coordinatorOf(ctx, sc, key)
	if err != nil {
		return nil, err
	}
	if node == n.cfg.NodeID {
		// The version the wire layer would pass on: every field.
		req.SetVersion(req.MaxVersion())
		return local(sc), nil
	}
	resp, err := n.peers.request(ctx, node, req)
	if err != nil {
		return nil, &ShareStateError{Err: kerr.CoordinatorNotAvailable, Message: kmsg.StringPtr(err.Error())}
	}
	return resp, nil
}

// coordinatorOf is the broker coordinating key: FindCoordinator with key
// type 2, answered by this broker's share coordinator as it answers
// clients (creating __share_group_state if it is missing).
func (c *ShareStateClient) coordinatorOf(ctx context.Context, sc *share.Coordinator, key share.Key) (int32, error) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 6
	req.CoordinatorType = share.CoordinatorTypeShare
	req.CoordinatorKeys = []string{key.String()}
	resp := sc.FindCoordinator(ctx, req)
	if len(resp.Coordinators) != 1 {
		return -1, kerr.CoordinatorNotAvailable
	}
	fc := resp.Coordinators[0]
	if fc.ErrorCode != 0 {
		return -1, &ShareStateError{Err: kerr.ErrorForCode(fc.ErrorCode), Message: fc.ErrorMessage}
	}
	return fc.NodeID, nil
}

// ShareStateError is a share coordinator's error answer: the Kafka error
// (Unwrap) and the message it came with.
type ShareStateError struct {
	Err     error
	Message *string
}

func (e *ShareStateError) Error() string {
	if e.Message == nil || *e.Message == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v: %s", e.Err, *e.Message)
}

func (e *ShareStateError) Unwrap() error { return e.Err }

// shareStateRetriable reports whether a call that failed with err should
// find the coordinator again and retry (Kafka's PersisterStateManager
// retries these).
func shareStateRetriable(err error) bool {
	return errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.NotCoordinator) ||
		errors.Is(err, kerr.CoordinatorLoadInProgress)
}
