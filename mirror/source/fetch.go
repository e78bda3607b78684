package source

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// minFetchVersion is the oldest Fetch a mirror can use: v12 brought
// LastFetchedEpoch and DivergingEpoch (KIP-595), without which a source
// whose log diverged from the copy (an unclean election, a failback) would
// be copied over it unnoticed.
const minFetchVersion = 12

// BuildFetch builds the consumer fetch of parts, in order (Kafka's
// Fetcher.prepareFetchRequests, sessionless): ReplicaID -1, no
// ReplicaState, READ_UNCOMMITTED, each partition with its fetch offset,
// the source leader epoch the metadata knows (-1 before it knows one) as
// CurrentLeaderEpoch, the core's LastFetchedEpoch, and the mirror topic's
// id. Request is the whole fetch as if one broker led every partition;
// Fetch splits it by source leader at send time.
//
// A partition given without a topic id adopts the source's current one, so
// a later recreation of the source topic is still noticed.
func (e *EndPoint) BuildFetch(parts []fetcher.FetchPartition) *fetcher.FetchRequest {
	if len(parts) == 0 {
		return nil
	}
	c := e.c
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.ReplicaState.ID, req.ReplicaState.Epoch = -1, -1
	req.IsolationLevel = 0 // READ_UNCOMMITTED: a mirror copies aborted data and markers too
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = c.cfg.MaxWaitMs, c.cfg.MinBytes, c.cfg.MaxBytes
	req.SessionID, req.SessionEpoch = 0, -1
	out := &fetcher.FetchRequest{Partitions: make(map[storage.TopicPartition]fetcher.FetchPartition, len(parts)), Request: req}

	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range parts {
		out.Partitions[p.TP] = p
		c.setExpectedLocked(p.TP.Topic, storage.TopicID(p.TopicID))
		epoch, id := int32(-1), storage.TopicID(p.TopicID)
		if tm, ok := c.meta.topics[p.TP.Topic]; ok {
			if pm, ok := tm.partitions[p.TP.Partition]; ok {
				epoch = pm.epoch
			}
			if _, pinned := c.expected[p.TP.Topic]; !pinned && tm.err == nil {
				c.setExpectedLocked(p.TP.Topic, tm.id)
			}
		}
		if exp, ok := c.expected[p.TP.Topic]; ok && id.IsZero() {
			id = exp
		}
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != p.TP.Topic {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = p.TP.Topic, id
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch = p.TP.Partition, p.FetchOffset, epoch
		rp.LastFetchedEpoch = p.LastFetchedEpoch
		rp.LogStartOffset = -1 // a consumer's; only followers report theirs
		rp.PartitionMaxBytes = c.cfg.PartitionMaxBytes
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return out
}

// leaderFetch is the part of a fetch that goes to one source broker.
type leaderFetch struct {
	leader int32
	req    *kmsg.FetchRequest
	routes map[storage.TopicPartition]route
	// names maps the topic ids asked to names, for answers by id (v13+).
	names map[[16]byte]string
	resp  *kmsg.FetchResponse
	err   error
}

// Fetch sends the fetch, each partition to its current source leader (in
// parallel when they are several), and returns each partition's answer
// with its record batches untouched. Partitions without a usable leader,
// or whose source topic is no longer the mirror topic, are answered with a
// partition error without a request. Errors are reported and, for leader
// and topic errors, the source metadata is refreshed before Fetch returns.
func (e *EndPoint) Fetch(ctx context.Context, req *fetcher.FetchRequest) (map[storage.TopicPartition]*fetcher.FetchData, error) {
	if req == nil || len(req.Partitions) == 0 {
		return nil, nil
	}
	if req.Request == nil {
		req = e.BuildFetch(sortedParts(req.Partitions))
	}
	c := e.c
	topics := topicsOf(req.Partitions)
	if err := c.ensure(ctx, topics); err != nil {
		c.reportAll(ctx, keys(req.Partitions), "fetch", err)
		return nil, err
	}
	out := make(map[storage.TopicPartition]*fetcher.FetchData, len(req.Partitions))
	rd := c.newRound("fetch", topics)
	subs := e.split(req, out, rd)
	sent := c.cfg.Clock.Now()

	if len(subs) == 1 {
		subs[0].send(ctx, c)
	} else {
		var wg sync.WaitGroup
		for _, s := range subs {
			wg.Go(func() { s.send(ctx, c) })
		}
		wg.Wait()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, s := range subs {
		e.collect(s, req, out, rd, sent)
	}
	rd.finish(ctx)
	return out, nil
}

// split routes the template's partitions to their leaders, in order;
// partitions with no route are answered in out at once.
func (e *EndPoint) split(req *fetcher.FetchRequest, out map[storage.TopicPartition]*fetcher.FetchData, rd *round) []*leaderFetch {
	c := e.c
	var subs []*leaderFetch
	byLeader := map[int32]*leaderFetch{}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range req.Request.Topics {
		for _, p := range t.Partitions {
			tp := storage.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if _, asked := req.Partitions[tp]; !asked {
				continue
			}
			rt := c.routeLocked(tp, c.expected[tp.Topic])
			if rt.err != nil {
				out[tp] = errorData(tp.Partition, rt.code)
				rd.noRoute(tp, rt)
				continue
			}
			s := byLeader[rt.leader]
			if s == nil {
				sreq := kmsg.NewPtrFetchRequest()
				*sreq = *req.Request
				sreq.Topics = nil
				s = &leaderFetch{leader: rt.leader, req: sreq, routes: map[storage.TopicPartition]route{}, names: map[[16]byte]string{}}
				byLeader[rt.leader] = s
				subs = append(subs, s)
			}
			id := t.TopicID
			if id == ([16]byte{}) {
				id = rt.id
			}
			if n := len(s.req.Topics); n == 0 || s.req.Topics[n-1].Topic != t.Topic {
				st := kmsg.NewFetchRequestTopic()
				st.Topic, st.TopicID = t.Topic, id
				s.req.Topics = append(s.req.Topics, st)
				s.names[id] = t.Topic
			}
			sp := p
			sp.CurrentLeaderEpoch = rt.epoch
			st := &s.req.Topics[len(s.req.Topics)-1]
			st.Partitions = append(st.Partitions, sp)
			s.routes[tp] = rt
		}
	}
	return subs
}

func (s *leaderFetch) send(ctx context.Context, c *Cluster) {
	kresp, err := c.cl.Broker(int(s.leader)).Request(ctx, s.req)
	if err != nil {
		s.err = err
		return
	}
	resp, ok := kresp.(*kmsg.FetchResponse)
	if !ok {
		s.err = fmt.Errorf("fetch: unexpected response %T", kresp)
		return
	}
	s.resp = resp
}

// collect maps one broker's answer to partitions and sorts its errors.
func (e *EndPoint) collect(s *leaderFetch, req *fetcher.FetchRequest, out map[storage.TopicPartition]*fetcher.FetchData, rd *round, sent time.Time) {
	c := e.c
	failAll := func(code int16, err error) {
		for tp := range s.routes {
			out[tp] = errorData(tp.Partition, code)
			if err != nil {
				rd.pending = append(rd.pending, pendingError{tp: tp, broker: s.leader, code: code, err: err})
			} else {
				rd.answered(tp, s.leader, code)
			}
		}
	}
	switch {
	case s.err != nil:
		for tp := range s.routes {
			out[tp] = errorData(tp.Partition, kerr.NetworkException.Code)
			rd.sendFailed(tp, s.leader, s.err)
		}
		return
	case s.resp.Version < minFetchVersion:
		failAll(kerr.UnsupportedVersion.Code, fmt.Errorf("%w: broker %d answers Fetch v%d, a mirror needs v%d+",
			ErrSourceUnsupported, s.leader, s.resp.Version, minFetchVersion))
		return
	case s.resp.ErrorCode != 0:
		failAll(s.resp.ErrorCode, nil)
		return
	}
	for i := range s.resp.Topics {
		t := &s.resp.Topics[i]
		name := t.Topic
		if s.resp.Version >= 13 {
			var ok bool
			if name, ok = s.names[t.TopicID]; !ok {
				continue
			}
		}
		for j := range t.Partitions {
			d := &t.Partitions[j]
			tp := storage.TopicPartition{Topic: name, Partition: d.Partition}
			rt, asked := s.routes[tp]
			if !asked {
				continue
			}
			out[tp] = d
			switch d.ErrorCode {
			case 0:
				c.recordData(tp, rt, d, sent)
				if len(d.RecordBatches) > 0 {
					c.recordLagSample(tp, req.Partitions[tp].FetchOffset, d.RecordBatches)
				}
			case kerr.OffsetOutOfRange.Code:
				c.recordOutOfRange(tp, req.Partitions[tp].FetchOffset)
			default:
				rd.answered(tp, s.leader, d.ErrorCode)
				d.ErrorCode = coreCode(d.ErrorCode)
			}
		}
	}
}

// errorData is a partition answer carrying only an error code.
func errorData(partition int32, code int16) *fetcher.FetchData {
	d := kmsg.NewFetchResponseTopicPartition()
	d.Partition, d.ErrorCode = partition, code
	d.HighWatermark, d.LastStableOffset, d.LogStartOffset = -1, -1, -1
	return &d
}

func sortedParts(m map[storage.TopicPartition]fetcher.FetchPartition) []fetcher.FetchPartition {
	out := make([]fetcher.FetchPartition, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b fetcher.FetchPartition) int {
		if a.TP.Topic != b.TP.Topic {
			if a.TP.Topic < b.TP.Topic {
				return -1
			}
			return 1
		}
		return int(a.TP.Partition) - int(b.TP.Partition)
	})
	return out
}
