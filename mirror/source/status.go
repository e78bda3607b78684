package source

import (
	"time"

	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// Status is what the source last said about a partition, for describe
// (source HW, lag) and for the driver's reports.
type Status struct {
	// HighWatermark, LastStableOffset and LogStartOffset are the source
	// partition's, from the last fetch or ListOffsets that carried them;
	// -1 until one did.
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	// Leader and LeaderEpoch are the source leader the last request went
	// to and its epoch.
	Leader      int32
	LeaderEpoch int32
	// OffsetsSkipped counts the offsets the core was told to jump over
	// because the source deleted them before they were mirrored.
	OffsetsSkipped int64
	// Err is the error of the last answer about the partition (a
	// *PartitionError), nil when it succeeded.
	Err error
	// UpdatedAt is when the last answer came.
	UpdatedAt time.Time
	// MeasuredAt is when HighWatermark was last measured: when the
	// request of the newest fetch answer or ListOffsets LATEST that
	// succeeded was sent (the age of the lag, mirror/lag).
	MeasuredAt time.Time
}

type partitionStatus struct {
	Status
	// oorOffset is the fetch offset the source last answered
	// OFFSET_OUT_OF_RANGE for and oorEnd the source's latest offset asked
	// after it (-1 when none is pending): with the earliest offset they
	// say what the core skips (fetcher.ResetFetchOffset).
	oorOffset, oorEnd int64
	// lag is the latest answer with data's lag sample, when lagSet.
	lag    LagSample
	lagSet bool
	// head is the last MeasureHeads answer, when headSet.
	head    Head
	headSet bool
}

// statusLocked returns tp's status, creating it. c.mu is held.
func (c *Cluster) statusLocked(tp storage.TopicPartition) *partitionStatus {
	st, ok := c.status[tp]
	if !ok {
		st = &partitionStatus{Status: Status{HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, Leader: -1,
			LeaderEpoch: -1}, oorOffset: -1, oorEnd: -1}
		c.status[tp] = st
	}
	return st
}

// Status returns what the source last said about tp.
func (c *Cluster) Status(tp storage.TopicPartition) (Status, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.status[tp]
	if !ok {
		return Status{}, false
	}
	return st.Status, true
}

// SourceHighWatermark is the source partition's high watermark as last
// seen, and its log start offset: describe's source HW, the source side of
// the mirror lag (mirror/lag: source HW − destination HW).
func (c *Cluster) SourceHighWatermark(tp storage.TopicPartition) (hw, logStart int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, found := c.status[tp]
	if !found || st.HighWatermark < 0 {
		return -1, -1, false
	}
	return st.HighWatermark, st.LogStartOffset, true
}

// recordData notes a successful fetch answer to a request sent at sent.
func (c *Cluster) recordData(tp storage.TopicPartition, r route, d *fetcher.FetchData, sent time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.statusLocked(tp)
	if d.HighWatermark >= 0 {
		st.measured(d.HighWatermark, d.LastStableOffset, sent)
	}
	if d.LogStartOffset >= 0 {
		st.LogStartOffset = d.LogStartOffset
	}
	st.Leader, st.LeaderEpoch, st.Err, st.UpdatedAt = r.leader, r.epoch, nil, c.cfg.Clock.Now()
}

// measured keeps a measurement of the source's high watermark and last
// stable offset (lso -1: not measured) taken by a request sent at at,
// unless a newer one is kept already: a fetch answer that comes late (a
// long poll) must not put back an older high watermark than the
// ListOffsets asked meanwhile (describe, the manager's poller) measured.
// A measurement's time is its request's: the source's offsets were at
// least these then. c.mu is held.
func (st *partitionStatus) measured(hw, lso int64, at time.Time) {
	if at.Before(st.MeasuredAt) {
		return
	}
	st.HighWatermark, st.MeasuredAt = hw, at
	if lso >= 0 {
		st.LastStableOffset = lso
	}
}

// recordOK notes a successful answer that carried no offsets.
func (c *Cluster) recordOK(tp storage.TopicPartition, r route) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.statusLocked(tp)
	st.Leader, st.LeaderEpoch, st.Err, st.UpdatedAt = r.leader, r.epoch, nil, c.cfg.Clock.Now()
}

// recordError notes a partition error and tells the driver.
func (c *Cluster) recordError(perr *PartitionError) {
	c.mu.Lock()
	st := c.statusLocked(perr.TP)
	st.Err, st.UpdatedAt = perr, c.cfg.Clock.Now()
	c.mu.Unlock()
	if IsFatal(perr) {
		c.logger.Warn("mirror partition cannot continue", "partition", perr.TP.String(), "err", perr)
	} else {
		c.logger.Debug("mirror partition error", "partition", perr.TP.String(), "err", perr)
	}
	if c.cfg.OnPartitionError != nil {
		c.cfg.OnPartitionError(perr.TP, perr)
	}
}

// recordOutOfRange notes that the source answered OFFSET_OUT_OF_RANGE at
// offset: the core now asks the latest and earliest offsets.
func (c *Cluster) recordOutOfRange(tp storage.TopicPartition, offset int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.statusLocked(tp)
	st.oorOffset, st.oorEnd, st.Err, st.UpdatedAt = offset, -1, nil, c.cfg.Clock.Now()
}

// recordLatest notes the source's latest offset (its high watermark: the
// ListOffsets, sent at sent, is a consumer's, READ_UNCOMMITTED).
func (c *Cluster) recordLatest(tp storage.TopicPartition, offset int64, sent time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.statusLocked(tp)
	st.measured(offset, -1, sent)
	st.Err, st.UpdatedAt = nil, c.cfg.Clock.Now()
	if st.oorOffset >= 0 {
		st.oorEnd = offset
	}
}

// recordEarliest notes the source's log start offset and, when it answers
// an OFFSET_OUT_OF_RANGE, counts the offsets the core will skip: the
// core restarts the log at the source's start when the fetch offset is
// below it and not beyond the source's end (fetcher.ResetFetchOffset).
//
// Unless Config.SkipDeletedOffsets, such a skip past mirrored records
// (from an offset above 0) is refused instead: the
// partition is reported failed with a RecordsDeletedError (a fatal error:
// the driver moves it to FAILED, logged at WARN), which is returned for
// the core, so it keeps the log as it is.
func (c *Cluster) recordEarliest(tp storage.TopicPartition, offset int64) error {
	c.mu.Lock()
	st := c.statusLocked(tp)
	st.LogStartOffset, st.Err, st.UpdatedAt = offset, nil, c.cfg.Clock.Now()
	from := st.oorOffset
	skipped := from >= 0 && st.oorEnd >= from && offset > from
	// From offset 0 nothing was mirrored yet: a first copy starts at the
	// source's log start, as a new Kafka follower does; only a gap after
	// mirrored records is a loss to fail on.
	refuse := skipped && from > 0 && !c.cfg.SkipDeletedOffsets
	if !refuse {
		// A refusal stays until the next fetch answer: the core asks
		// the offsets again after a backoff without fetching, and must
		// be refused again rather than restart the log.
		st.oorOffset, st.oorEnd = -1, -1
	}
	if skipped && !refuse {
		st.OffsetsSkipped += offset - from
	}
	c.mu.Unlock()
	if !skipped {
		return nil
	}
	if refuse {
		perr := &PartitionError{TP: tp, Op: "list offsets", Broker: -1,
			Err: &RecordsDeletedError{TP: tp, DestinationEnd: from, SourceStart: offset}}
		c.recordError(perr)
		return perr
	}
	c.logger.Warn("source deleted offsets before they were mirrored; skipping them",
		"partition", tp.String(), "from", from, "to", offset, "skipped", offset-from)
	if c.cfg.OnOffsetsSkipped != nil {
		c.cfg.OnOffsetsSkipped(tp, from, offset)
	}
	return nil
}
