package share

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// ShareFetch: v1-2 (the wire layer gates versions)
//
// Behavior (Kafka's KafkaApis.handleShareFetchRequest,
// SharePartitionManager.fetchMessages, DelayedShareFetch):
//   - GroupId and MemberId must be set (a member id of at most 36
//     characters); membership is not checked here, as in Kafka.
//   - Share session per KIP-932: epoch 0 opens one with the request's
//     partitions (acknowledgements then are INVALID_REQUEST), -1 only
//     acknowledges and closes it, giving back the member's records;
//     otherwise the epoch must match (INVALID_SHARE_SESSION_EPOCH,
//     SHARE_SESSION_NOT_FOUND) and the request adds partitions and forgets
//     ForgottenTopicsData. A full cache is SHARE_SESSION_LIMIT_REACHED,
//     answered after MaxWaitMs as Kafka delays it.
//   - Piggybacked acknowledgements are applied first, and answered in
//     AcknowledgeErrorCode once persisted.
//   - Records are acquired for the member from the session's partitions,
//     rotated by session epoch, up to MaxRecords (exactly in record-limit
//     acquire mode, to a batch boundary in batch-optimized mode) and
//     MaxBytes; the response carries the batches holding them and the
//     acquired ranges with their delivery counts.
//   - Long poll: with nothing to acquire, or less than MinBytes read, the
//     request waits up to MaxWaitMs, woken by new data and by records
//     becoming available (acknowledgements, expired locks, closed
//     sessions).
//   - An incremental answer lists a partition only with records, an error
//     or when it just joined the session; acknowledged partitions always.
//   - NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH carry CurrentLeader
//     and NodeEndpoints.
//
// Version notes: v1 (Kafka 4.1, KIP-932 GA) MaxRecords, BatchSize,
// AcquisitionLockTimeoutMs; v2 (Kafka 4.2) ShareAcquireMode (KIP-1206) and
// IsRenewAck with RENEW acknowledgements, which fetch nothing (KIP-1222).

// ShareFetch answers a ShareFetch request.
func (m *Manager) ShareFetch(ctx context.Context, req *kmsg.ShareFetchRequest) *kmsg.ShareFetchResponse {
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	group, member := deref(req.GroupID), deref(req.MemberID)
	gcfg := m.groupConfig(group)
	resp.AcquisitionLockTimeoutMillis = int32(gcfg.RecordLockDuration.Milliseconds())
	renew := req.Version >= 2 && req.IsRenewAck
	mode := AcquireMode(req.ShareAcquireMode)
	switch {
	case !validIDs(group, member):
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	case renew && (req.MaxBytes != 0 || req.MinBytes != 0 || req.MaxRecords != 0 || req.MaxWaitMillis != 0):
		// KIP-1222: a renewal fetches nothing.
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	case mode != BatchOptimized && mode != RecordLimit:
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	parts, acks := fetchRequestPartitions(req)
	var forget []TopicPartition
	for _, ft := range req.ForgottenTopicsData {
		for _, p := range ft.Partitions {
			forget = append(forget, TopicPartition{ft.TopicID, p})
		}
	}
	key := sessionKey{group, member}
	fc, created, code := m.sessions.newContext(key, req.ShareSessionEpoch, parts, forget, hasAcks(acks))
	if created != nil {
		m.sessions.watch(created, context.AfterFunc(ctx, func() { m.closeSession(key, created) }))
	}
	if code == kerr.ShareSessionLimitReached {
		// Kafka answers after MaxWaitMs (IdleShareFetchTimerTask), so a
		// client retrying at once does not spin.
		m.sleep(ctx, time.Duration(req.MaxWaitMillis)*time.Millisecond)
	}
	if code != nil {
		resp.ErrorCode = code.Code
		return resp
	}

	acked := m.acknowledgeAll(ctx, group, member, acks, renew)
	var fetched map[TopicPartition]*fetchResult
	if !fc.final && !renew {
		p := m.fetchParams(req, group, member, gcfg, mode)
		p.session = fc.id
		fetched = m.fetchReadable(ctx, p, fc.parts)
	}
	if fc.final {
		m.closeSession(key, nil)
	}

	b := newShareFetchBuilder(resp)
	for _, tp := range fc.parts {
		r := fetched[tp]
		if r == nil {
			continue
		}
		if fc.sess != nil && !m.sessions.mustRespond(fc.sess, tp, len(r.acquired) > 0 || r.err != nil) {
			continue
		}
		p := b.partition(tp)
		if r.err != nil {
			p.ErrorCode = r.err.Code
		}
		if r.records != nil {
			p.Records = r.records
		}
		for _, a := range r.acquired {
			ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
			ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = a.First, a.Last, a.DeliveryCount
			p.AcquiredRecords = append(p.AcquiredRecords, ar)
		}
	}
	for _, a := range acked {
		p := b.partition(a.tp)
		if a.err != nil {
			p.AcknowledgeErrorCode = a.err.Code
		}
	}
	m.addShareFetchLeaders(resp, reqctx.From(ctx).Listener)
	return resp
}

// fetchReadable fetches the partitions the member may read (reqctx's
// ReadAllowed; all without an authorizer) and answers the others
// TOPIC_AUTHORIZATION_FAILED without acquiring from them; they stay in
// the share session, so READ granted later reaches them without the
// member naming them again (KafkaApis.handleShareFetchRequest authorizes
// the share fetch context's partitions).
func (m *Manager) fetchReadable(ctx context.Context, p fetchParams, tps []TopicPartition) map[TopicPartition]*fetchResult {
	readable := reqctx.ReadAllowed(ctx)
	if readable == nil {
		return m.fetch(ctx, p, tps)
	}
	var read, denied []TopicPartition
	for _, tp := range tps {
		if readable("", tp.TopicID) {
			read = append(read, tp)
		} else {
			denied = append(denied, tp)
		}
	}
	if len(denied) == 0 {
		return m.fetch(ctx, p, tps)
	}
	out := m.fetch(ctx, p, read)
	for _, tp := range denied {
		out[tp] = &fetchResult{err: kerr.TopicAuthorizationFailed}
	}
	return out
}

// validIDs is the id check Kafka makes (a member id is a UUID string, or
// at most 36 characters as kfake checks it).
func validIDs(group, member string) bool {
	return group != "" && member != "" && len(member) <= 36
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// fetchRequestPartitions returns the request's partitions, deduplicated in
// order, and their acknowledgements (the last occurrence wins, as a map
// keyed by partition keeps it in Kafka).
func fetchRequestPartitions(req *kmsg.ShareFetchRequest) ([]TopicPartition, []ackPartition) {
	var parts []TopicPartition
	var acks []ackPartition
	seen := map[TopicPartition]int{}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			tp := TopicPartition{rt.TopicID, rp.Partition}
			ap := ackPartition{tp: tp, batches: ackBatches(rp.AcknowledgementBatches, func(b kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) (int64, int64, []int8) {
				return b.FirstOffset, b.LastOffset, b.AcknowledgeTypes
			})}
			if i, dup := seen[tp]; dup {
				acks[i] = ap
				continue
			}
			seen[tp] = len(parts)
			parts = append(parts, tp)
			acks = append(acks, ap)
		}
	}
	// Only partitions with acknowledgements are acknowledged.
	out := acks[:0]
	for _, a := range acks {
		if len(a.batches) > 0 {
			out = append(out, a)
		}
	}
	return parts, out
}

func hasAcks(acks []ackPartition) bool { return len(acks) > 0 }

// fetchParams are a ShareFetch's limits.
type fetchParams struct {
	group, member string
	session       uint64
	maxWait       time.Duration
	minBytes      int32
	maxBytes      int32
	maxRecords    int
	batchSize     int
	mode          AcquireMode
	readCommitted bool
	lock          time.Duration
	rotate        int
}

func (m *Manager) fetchParams(req *kmsg.ShareFetchRequest, group, member string, g GroupConfig, mode AcquireMode) fetchParams {
	maxBytes := max(req.MaxBytes, 0)
	if m.cfg.FetchMaxBytes > 0 {
		maxBytes = min(maxBytes, m.cfg.FetchMaxBytes)
	}
	return fetchParams{
		group: group, member: member,
		maxWait:       time.Duration(max(req.MaxWaitMillis, 0)) * time.Millisecond,
		minBytes:      min(max(req.MinBytes, 0), maxBytes),
		maxBytes:      maxBytes,
		maxRecords:    int(req.MaxRecords),
		batchSize:     int(max(req.BatchSize, 0)),
		mode:          mode,
		readCommitted: g.ReadCommitted,
		lock:          g.RecordLockDuration,
		rotate:        int(max(req.ShareSessionEpoch, 0)),
	}
}

// fetchResult is one partition's part of a ShareFetch answer.
type fetchResult struct {
	err      *kerr.Error
	records  []byte
	acquired []AcquiredRange
}

// fetchTarget is a partition a fetch may acquire from.
type fetchTarget struct {
	tp  TopicPartition
	log PartitionLog
	e   *entry
	res *fetchResult
}

// fetch acquires records for the member from tps (Kafka's
// SharePartitionManager.processShareFetch with DelayedShareFetch): at
// once when there is anything (and MinBytes), else when something arrives
// or becomes available again, or what there is once MaxWaitMs passed.
func (m *Manager) fetch(ctx context.Context, p fetchParams, tps []TopicPartition) map[TopicPartition]*fetchResult {
	out := make(map[TopicPartition]*fetchResult, len(tps))
	var targets []*fetchTarget
	for _, tp := range tps {
		r := &fetchResult{}
		out[tp] = r
		log, err := m.logs.Leader(tp)
		if err != nil {
			r.err = errorCode(err)
			continue
		}
		e, err := m.partition(ctx, PartitionKey{p.group, tp.TopicID, tp.Partition}, log)
		if err != nil {
			r.err = errorCode(err)
			continue
		}
		targets = append(targets, &fetchTarget{tp: tp, log: log, e: e, res: r})
	}
	if len(targets) == 0 || p.maxRecords <= 0 || p.maxBytes <= 0 {
		return out
	}
	if n := p.rotate % len(targets); n > 0 {
		targets = append(targets[n:], targets[:n]...)
	}
	if p.maxWait <= 0 {
		m.tryFetch(p, targets, 0, nil)
		return out
	}

	// Watch before the first try, so nothing that lands after it is
	// missed.
	wake := make(chan struct{}, 1)
	watched := make([]TopicPartition, len(targets))
	for i, t := range targets {
		t.e.watch(wake)
		defer t.e.unwatch(wake)
		watched[i] = t.tp
	}
	logChanged, stop := m.logs.Watch(watched)
	defer stop()
	if m.tryFetch(p, targets, p.minBytes, wake) {
		return out
	}
	// Parked: the connection's next request may start meanwhile.
	reqctx.Unmute(ctx)
	t := time.NewTimer(p.maxWait)
	defer t.Stop()
	for {
		select {
		case <-wake:
		case <-logChanged:
		case <-t.C:
			// Expired: whatever there is now (DelayedShareFetch.onComplete).
			m.tryFetch(p, targets, 0, wake)
			return out
		case <-reqctx.Draining(ctx):
			return out
		case <-ctx.Done():
			return out
		case <-m.ctx.Done():
			return out
		}
		if m.tryFetch(p, targets, p.minBytes, wake) {
			return out
		}
	}
}

// pendingRead is a read done for a target, not yet acquired from.
type pendingRead struct {
	t       *fetchTarget
	from    int64
	data    []byte
	batches []readBatch
}

// tryFetch reads the targets whose share partitions can acquire and, when
// the reads hold at least minBytes, acquires from them in order up to the
// request's limits. It reports whether the fetch is complete: records were
// acquired or a partition failed.
func (m *Manager) tryFetch(p fetchParams, targets []*fetchTarget, minBytes int32, self chan struct{}) bool {
	var reads []pendingRead
	failed := false
	budget := p.maxBytes
	for _, t := range targets {
		if budget <= 0 {
			break // the first partition read returns at least one batch
		}
		if t.res.err != nil || len(t.res.acquired) > 0 {
			continue
		}
		from, ok := m.takeFetchLock(t)
		if !ok {
			failed = failed || t.res.err != nil
			continue
		}
		rd, err := t.log.Read(from, budget, p.readCommitted)
		var batches []readBatch
		if err == nil {
			batches, err = parseRead(rd, p.readCommitted)
		}
		if err != nil && !errors.Is(err, kerr.OffsetOutOfRange) {
			// An offset out of range is the log start moving under
			// the read: the next try starts there.
			t.res.err = errorCode(err)
			failed = true
		}
		if err != nil || len(batches) == 0 {
			m.releaseFetchLock(t.e, self)
			continue
		}
		reads = append(reads, pendingRead{t: t, from: from, data: rd.Records, batches: batches})
		budget -= int32(len(rd.Records))
	}
	read := int64(0)
	for _, r := range reads {
		read += int64(len(r.data))
	}
	if read < int64(max(minBytes, 1)) && !failed {
		for _, r := range reads {
			m.releaseFetchLock(r.t.e, self)
		}
		return false
	}
	acquired := 0
	now := m.clock.Now()
	for _, r := range reads {
		e := r.t.e
		e.mu.Lock()
		e.releaseFetchLockLocked(self)
		var got []AcquiredRange
		if e.gone == nil && acquired < p.maxRecords {
			got = e.sp.Acquire(AcquireRequest{
				Member: p.member, Session: p.session, Now: now, Lock: p.lock,
				MaxRecords: p.maxRecords - acquired, Mode: p.mode, BatchSize: p.batchSize,
				From: r.from, Batches: logBatches(r.batches),
			})
		}
		dirty := e.gone == nil && e.sp.Dirty()
		e.mu.Unlock()
		if dirty {
			m.flush(e)
		}
		for _, g := range got {
			acquired += int(g.Last - g.First + 1)
		}
		if len(got) > 0 {
			r.t.res.acquired = got
			r.t.res.records = recordsFor(r.data, r.batches, got)
			m.wakeReaper(now.Add(p.lock))
		}
	}
	return acquired > 0 || failed
}

// takeFetchLock returns where to read the target's log from, holding the
// share partition's fetch lock; false when it cannot acquire anything, is
// being read by another fetch (which wakes this one when it is done), or
// is gone (then its error is set).
func (m *Manager) takeFetchLock(t *fetchTarget) (int64, bool) {
	e := t.e
	e.mu.Lock()
	if e.gone != nil {
		e.mu.Unlock()
		t.res.err = errorCode(e.gone)
		return 0, false
	}
	if e.fetching {
		e.contended = true
		e.mu.Unlock()
		return 0, false
	}
	// The log start moved past the share partition (retention,
	// DeleteRecords): Kafka's updateCacheAndOffsets.
	e.sp.MoveStart(t.log.LogStartOffset())
	dirty, ok := e.sp.Dirty(), e.sp.CanAcquire()
	if ok {
		e.fetching = true
	}
	from := e.sp.FetchOffset()
	e.mu.Unlock()
	if dirty {
		m.flush(e)
	}
	return from, ok
}

// releaseFetchLock lets the next fetch read the partition.
func (m *Manager) releaseFetchLock(e *entry, self chan struct{}) {
	e.mu.Lock()
	e.releaseFetchLockLocked(self)
	e.mu.Unlock()
}

// releaseFetchLockLocked releases the fetch lock and wakes the fetches that
// found it taken (Kafka completes delayed share fetches when it releases
// the fetch lock). Only those: waking every parked fetch of an empty
// partition would have them wake each other for ever.
func (e *entry) releaseFetchLockLocked(self chan struct{}) {
	e.fetching = false
	if e.contended {
		e.contended = false
		e.notifyLocked(self)
	}
}

// sleep waits d, or until ctx or the manager ends.
func (m *Manager) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	reqctx.Unmute(ctx)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-m.ctx.Done():
	}
}
