package share

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/clock"
)

// harness is a manager over fake logs and an in-memory persister, with a
// manual clock, serving one partition tp of topic 1.
type harness struct {
	t     *testing.T
	logs  *fakeLogs
	p     *memPersister
	clk   *clock.Manual
	m     *Manager
	tp    TopicPartition
	log   *fakeLog
	group string
}

type staticGroups GroupConfig

func (g staticGroups) ShareGroupConfig(string) GroupConfig { return GroupConfig(g) }

func newHarness(t *testing.T, cfg Config, g GroupConfig) *harness {
	h := &harness{t: t, logs: newFakeLogs(), p: newMemPersister(), clk: clock.NewManual(ddBase), group: "g",
		tp: TopicPartition{TopicID: [16]byte{1}, Partition: 0}}
	h.log = h.logs.add(h.tp)
	if g.AutoOffsetReset == "" {
		g.AutoOffsetReset = "earliest"
	}
	h.m = NewManager(cfg, h.logs, h.p, staticGroups(g), h.clk, nil)
	t.Cleanup(h.m.Close)
	return h
}

func (h *harness) key() PartitionKey { return PartitionKey{h.group, h.tp.TopicID, h.tp.Partition} }

// member is one share consumer with its own connection and session epoch.
type member struct {
	h      *harness
	id     string
	epoch  int32
	ctx    context.Context
	cancel context.CancelFunc
}

func (h *harness) member(id string) *member {
	ctx, cancel := context.WithCancel(context.Background())
	h.t.Cleanup(cancel)
	return &member{h: h, id: id, ctx: ctx, cancel: cancel}
}

type fetchOpt func(*kmsg.ShareFetchRequest)

func maxRecords(n int32) fetchOpt { return func(r *kmsg.ShareFetchRequest) { r.MaxRecords = n } }
func maxWait(d time.Duration) fetchOpt {
	return func(r *kmsg.ShareFetchRequest) { r.MaxWaitMillis = int32(d.Milliseconds()) }
}
func epoch(e int32) fetchOpt   { return func(r *kmsg.ShareFetchRequest) { r.ShareSessionEpoch = e } }
func version(v int16) fetchOpt { return func(r *kmsg.ShareFetchRequest) { r.Version = v } }

// withAcks piggybacks acknowledgements for the harness partition.
func withAcks(h *harness, batches ...kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) fetchOpt {
	return func(r *kmsg.ShareFetchRequest) {
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				if r.Topics[i].TopicID == h.tp.TopicID && r.Topics[i].Partitions[j].Partition == h.tp.Partition {
					r.Topics[i].Partitions[j].AcknowledgementBatches = batches
				}
			}
		}
	}
}

// fetch sends a ShareFetch for the harness partition at the member's
// epoch (0 the first time), and moves the epoch when it succeeds.
func (mb *member) fetch(opts ...fetchOpt) *kmsg.ShareFetchResponse {
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 2
	req.GroupID, req.MemberID = kmsg.StringPtr(mb.h.group), kmsg.StringPtr(mb.id)
	req.ShareSessionEpoch = mb.epoch
	req.MaxBytes, req.MinBytes, req.MaxRecords = 1<<20, 1, 500
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = mb.h.tp.TopicID
	rp := kmsg.NewShareFetchRequestTopicPartition()
	rp.Partition = mb.h.tp.Partition
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	for _, o := range opts {
		o(req)
	}
	resp := mb.h.m.ShareFetch(mb.ctx, req)
	if resp.ErrorCode == 0 {
		mb.epoch = nextEpoch(req.ShareSessionEpoch)
	}
	return resp
}

func ackBatch(first, last int64, types ...AckType) kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch {
	b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset = first, last
	for _, t := range types {
		b.AcknowledgeTypes = append(b.AcknowledgeTypes, int8(t))
	}
	return b
}

// ack sends a ShareAcknowledge for the harness partition.
func (mb *member) ack(renew bool, batches ...kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) *kmsg.ShareAcknowledgeResponse {
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version = 2
	req.GroupID, req.MemberID = kmsg.StringPtr(mb.h.group), kmsg.StringPtr(mb.id)
	req.ShareSessionEpoch = mb.epoch
	req.IsRenewAck = renew
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = mb.h.tp.TopicID
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	rp.Partition = mb.h.tp.Partition
	for _, b := range batches {
		ab := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
		ab.FirstOffset, ab.LastOffset, ab.AcknowledgeTypes = b.FirstOffset, b.LastOffset, b.AcknowledgeTypes
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ab)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := mb.h.m.ShareAcknowledge(mb.ctx, req)
	if resp.ErrorCode == 0 {
		mb.epoch = nextEpoch(req.ShareSessionEpoch)
	}
	return resp
}

// part is the harness partition's entry of a ShareFetch answer.
func (h *harness) part(resp *kmsg.ShareFetchResponse) *kmsg.ShareFetchResponseTopicPartition {
	h.t.Helper()
	if resp.ErrorCode != 0 {
		h.t.Fatalf("ShareFetch failed: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if p := &resp.Topics[i].Partitions[j]; resp.Topics[i].TopicID == h.tp.TopicID && p.Partition == h.tp.Partition {
				return p
			}
		}
	}
	return nil
}

// acquired is what a ShareFetch acquired on the harness partition, with
// the offsets of the records its batches hold (checking that every
// acquired offset holding a record comes with it).
func (h *harness) acquired(resp *kmsg.ShareFetchResponse) []AcquiredRange {
	h.t.Helper()
	p := h.part(resp)
	if p == nil {
		return nil
	}
	if p.ErrorCode != 0 {
		h.t.Fatalf("partition error %v", kerr.ErrorForCode(p.ErrorCode))
	}
	var out []AcquiredRange
	for _, a := range p.AcquiredRecords {
		out = append(out, AcquiredRange{a.FirstOffset, a.LastOffset, a.DeliveryCount})
	}
	batches, err := parseRead(LogRead{Records: p.Records}, false)
	if err != nil {
		h.t.Fatalf("records: %v", err)
	}
	for _, a := range out {
		for off := a.First; off <= a.Last; off++ {
			found := false
			for _, b := range batches {
				found = found || (b.First <= off && off <= b.Last)
			}
			if !found {
				h.t.Fatalf("acquired offset %d comes without its batch", off)
			}
		}
	}
	return out
}

func count(rs []AcquiredRange) int64 {
	n := int64(0)
	for _, r := range rs {
		n += r.Last - r.First + 1
	}
	return n
}

func ackCode(t *testing.T, resp *kmsg.ShareAcknowledgeResponse) int16 {
	t.Helper()
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("ShareAcknowledge answered %+v", resp.Topics)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}
