package source

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// consumerRequests builds ListOffsets and OffsetForLeaderEpoch as a
// consumer (ReplicaID -1) with the fetcher core's builders; franz-go
// negotiates each version down to what the source broker speaks.
func consumerRequests() *fetcher.KafkaEndPoint { return &fetcher.KafkaEndPoint{ReplicaID: -1} }

// FetchEarliestOffset asks the source leader for its log start offset
// (ListOffsets EARLIEST as a consumer). currentLeaderEpoch, the core's
// destination epoch, is not sent: the source leader epoch is.
func (e *EndPoint) FetchEarliestOffset(ctx context.Context, tp storage.TopicPartition, _ int32) (fetcher.OffsetAndEpoch, error) {
	out, err := e.listOffset(ctx, tp, storage.EarliestTimestamp)
	if err == nil {
		err = e.c.recordEarliest(tp, out.Offset)
	}
	return out, err
}

// FetchLatestOffset asks the source leader for its latest offset
// (ListOffsets LATEST as a consumer, READ_UNCOMMITTED): the source's high
// watermark, the end of what a mirror may copy.
func (e *EndPoint) FetchLatestOffset(ctx context.Context, tp storage.TopicPartition, _ int32) (fetcher.OffsetAndEpoch, error) {
	sent := e.c.cfg.Clock.Now()
	out, err := e.listOffset(ctx, tp, storage.LatestTimestamp)
	if err == nil {
		e.c.recordLatest(tp, out.Offset, sent)
	}
	return out, err
}

func (e *EndPoint) listOffset(ctx context.Context, tp storage.TopicPartition, ts int64) (fetcher.OffsetAndEpoch, error) {
	c := e.c
	topics := []string{tp.Topic}
	if err := c.ensure(ctx, topics); err != nil {
		c.reportAll(ctx, []storage.TopicPartition{tp}, "list offsets", err)
		return fetcher.OffsetAndEpoch{}, err
	}
	rd := c.newRound("list offsets", topics)
	c.mu.Lock()
	rt := c.routeLocked(tp, c.expected[tp.Topic])
	c.mu.Unlock()
	if rt.err != nil {
		rd.noRoute(tp, rt)
		rd.finish(ctx)
		return fetcher.OffsetAndEpoch{}, &PartitionError{TP: tp, Op: rd.op, Broker: -1, Err: rt.err}
	}
	req := consumerRequests().BuildListOffsets(tp, rt.epoch, ts)
	req.IsolationLevel = 0 // READ_UNCOMMITTED
	kresp, err := c.cl.Broker(int(rt.leader)).Request(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return fetcher.OffsetAndEpoch{}, ctx.Err()
		}
		rd.sendFailed(tp, rt.leader, err)
		rd.finish(ctx)
		return fetcher.OffsetAndEpoch{}, &PartitionError{TP: tp, Op: rd.op, Broker: rt.leader, Err: err}
	}
	resp, ok := kresp.(*kmsg.ListOffsetsResponse)
	if !ok {
		return fetcher.OffsetAndEpoch{}, fmt.Errorf("list offsets: unexpected response %T", kresp)
	}
	out, err := fetcher.DecodeListOffsets(tp, resp)
	if err == nil {
		c.recordOK(tp, rt)
		return out, nil
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return fetcher.OffsetAndEpoch{}, err
	}
	rd.answered(tp, rt.leader, ke.Code)
	rd.finish(ctx)
	// The core parks a partition whose ListOffsets answered
	// FENCED_LEADER_EPOCH; here only the source metadata was stale.
	return fetcher.OffsetAndEpoch{}, &PartitionError{TP: tp, Op: rd.op, Broker: rt.leader,
		Err: kerr.ErrorForCode(coreCode(ke.Code))}
}

// FetchEpochEndOffsets asks the source leaders where epochs end
// (OffsetForLeaderEpoch v3+ as a consumer, ReplicaID -1: KIP-320's path,
// which needs TOPIC DESCRIBE only). Each partition goes to its own leader
// with the source leader epoch as CurrentLeaderEpoch; partitions without a
// route, or whose request failed, answer with an error code.
func (e *EndPoint) FetchEpochEndOffsets(ctx context.Context, parts map[storage.TopicPartition]fetcher.EpochRequest) (map[storage.TopicPartition]fetcher.EpochEndOffset, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	c := e.c
	topics := topicsOf(parts)
	if err := c.ensure(ctx, topics); err != nil {
		c.reportAll(ctx, keys(parts), "offset for leader epoch", err)
		return nil, err
	}
	out := make(map[storage.TopicPartition]fetcher.EpochEndOffset, len(parts))
	rd := c.newRound("offset for leader epoch", topics)
	type leaderEpochs struct {
		leader int32
		parts  map[storage.TopicPartition]fetcher.EpochRequest
		routes map[storage.TopicPartition]route
		resp   *kmsg.OffsetForLeaderEpochResponse
		err    error
	}
	byLeader := map[int32]*leaderEpochs{}
	c.mu.Lock()
	for tp, p := range parts {
		rt := c.routeLocked(tp, c.expected[tp.Topic])
		if rt.err != nil {
			out[tp] = errorEpoch(rt.code)
			rd.noRoute(tp, rt)
			continue
		}
		g := byLeader[rt.leader]
		if g == nil {
			g = &leaderEpochs{leader: rt.leader, parts: map[storage.TopicPartition]fetcher.EpochRequest{},
				routes: map[storage.TopicPartition]route{}}
			byLeader[rt.leader] = g
		}
		g.parts[tp] = fetcher.EpochRequest{CurrentLeaderEpoch: rt.epoch, LeaderEpoch: p.LeaderEpoch}
		g.routes[tp] = rt
	}
	c.mu.Unlock()

	var wg sync.WaitGroup
	for _, g := range byLeader {
		wg.Go(func() {
			kresp, err := c.cl.Broker(int(g.leader)).Request(ctx, consumerRequests().BuildEpochRequest(g.parts))
			if err != nil {
				g.err = err
				return
			}
			resp, ok := kresp.(*kmsg.OffsetForLeaderEpochResponse)
			if !ok {
				g.err = fmt.Errorf("offset for leader epoch: unexpected response %T", kresp)
				return
			}
			g.resp = resp
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	leaders := make([]int32, 0, len(byLeader))
	for id := range byLeader {
		leaders = append(leaders, id)
	}
	slices.Sort(leaders)
	for _, id := range leaders {
		g := byLeader[id]
		if g.err != nil {
			for tp := range g.parts {
				out[tp] = errorEpoch(kerr.NetworkException.Code)
				rd.sendFailed(tp, g.leader, g.err)
			}
			continue
		}
		answers := fetcher.DecodeEpochResponse(g.resp)
		for tp := range g.parts {
			a, ok := answers[tp]
			if !ok {
				// Left out of the answer: an error, so the core backs
				// the partition off instead of asking again at once.
				a = errorEpoch(kerr.UnknownServerError.Code)
			}
			if a.ErrorCode != 0 {
				rd.answered(tp, g.leader, a.ErrorCode)
				a.ErrorCode = coreCode(a.ErrorCode)
			} else {
				c.recordOK(tp, g.routes[tp])
			}
			out[tp] = a
		}
	}
	rd.finish(ctx)
	return out, nil
}

func errorEpoch(code int16) fetcher.EpochEndOffset {
	return fetcher.EpochEndOffset{ErrorCode: code, LeaderEpoch: fetcher.NoEpoch, EndOffset: -1}
}

// EpochEndOffset is the source leader's OffsetForLeaderEpoch answer for
// epoch on tp: the largest epoch ≤ it the source knows and where it ends,
// what the mirror fetcher's LastFetchedEpoch check reads (a Fetch's
// DivergingEpoch is the same lookup). For a failback dry run.
func (c *Cluster) EpochEndOffset(ctx context.Context, tp storage.TopicPartition, epoch int32) (fetcher.EpochEndOffset, error) {
	out, err := (&EndPoint{c: c}).FetchEpochEndOffsets(ctx, map[storage.TopicPartition]fetcher.EpochRequest{tp: {CurrentLeaderEpoch: -1, LeaderEpoch: epoch}})
	if err != nil {
		return fetcher.EpochEndOffset{}, err
	}
	a := out[tp]
	if a.ErrorCode != 0 {
		return a, fmt.Errorf("OffsetForLeaderEpoch %s on the source: %w", tp, kerr.ErrorForCode(a.ErrorCode))
	}
	return a, nil
}
