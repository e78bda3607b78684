package manager

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strait-io/strait/mirror/lag"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/storage"
)

// PartitionStatus is one mirror partition this node leads, for
// DescribeMirrors. Offsets and lag are -1 when unknown; the lag is
// mirror/lag's definition.
type PartitionStatus struct {
	Topic     string
	Partition int32
	// State is the partition's state as last confirmed by __mirror_state.
	State partition.State
	// SourceHighWatermark is the source partition's high watermark as last
	// measured (a fetch answer while MIRRORING, ListOffsets otherwise).
	SourceHighWatermark int64
	// DestinationHighWatermark is what the destination's consumers can
	// read; DestinationLogEndOffset, beside it, what the leader holds.
	DestinationHighWatermark int64
	DestinationLogEndOffset  int64
	// Lag is lag.Lag.Records, CommittedLag lag.Lag.Committed and LagMs
	// lag.Lag.Ms: -1 when unknown (never 0 for unknown).
	Lag, CommittedLag, LagMs int64
	// LagMeasuredAt is when the source side of the lag was last measured
	// successfully (zero: never).
	LagMeasuredAt   time.Time
	LastMirrorEpoch int32
	// LastError is the machine's last error (or the FAILED record's), else
	// the source's last error for the partition.
	LastError string
	// OffsetsSkipped counts the offsets the source deleted before they
	// were mirrored (since this node started).
	OffsetsSkipped int64
	RetryAttempt   int32
}

// view is a machine's status as the loop last published it.
type view struct {
	topicID storage.TopicID
	st      partition.Status
}

// publish copies every machine's status for the readers.
func (m *Manager) publish() {
	m.viewMu.Lock()
	defer m.viewMu.Unlock()
	for tp, p := range m.parts {
		m.views[tp] = view{topicID: p.topicID, st: p.m.Status()}
	}
	for tp, ch := range m.draining {
		select {
		case <-ch:
			delete(m.draining, tp)
		default:
		}
	}
}

// Partitions returns the partitions of mirror this node leads, sorted, with
// the lag from the last source measurement (lag.StaleAfter).
func (m *Manager) Partitions(mirror string) []PartitionStatus { return m.partitions(mirror, nil) }

// partitions is Partitions, with the source side of the lag from fresh
// when it is not nil.
func (m *Manager) partitions(mirror string, fresh *freshSource) []PartitionStatus {
	views := m.ledViews(mirror)
	m.connMu.RLock()
	c := m.conns[mirror]
	m.connMu.RUnlock()
	counters := m.counters.peek(mirror)

	out := make([]PartitionStatus, 0, len(views))
	for tp, v := range views {
		out = append(out, m.partitionStatus(tp, v, c, counters, fresh))
	}
	slices.SortFunc(out, func(a, b PartitionStatus) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

func (m *Manager) partitionStatus(tp storage.TopicPartition, v view, c *mirrorConn, counters *mirrorCounters, fresh *freshSource) PartitionStatus {
	rec := v.st.Record
	ps := PartitionStatus{Topic: tp.Topic, Partition: tp.Partition, State: rec.State, SourceHighWatermark: -1,
		DestinationHighWatermark: -1, DestinationLogEndOffset: -1, Lag: -1, CommittedLag: -1, LagMs: -1, LastMirrorEpoch: rec.LastMirrorEpoch, LastError: v.st.LastError,
		OffsetsSkipped: counters.skippedOf(tp), RetryAttempt: rec.RetryAttempt}
	if rec.State == partition.StateFailed && rec.ErrorMessage != "" {
		ps.LastError = rec.ErrorMessage
	}
	if v.fetching() {
		// The machine keeps its last error; a retriable fetch error the
		// fetcher has since recovered from is history, not the current
		// state. While mirroring, the current error is the source's.
		ps.LastError = ""
	}
	if rec.State == partition.StateStopped {
		// STOPPED is final: every stop step succeeded in the end, and a
		// failure one of them retried past (a __mirror_state write the
		// coordinator refused until it saw the stop's epoch bump) is
		// history, not the partition's state.
		ps.LastError = ""
	}
	src := lag.Source{HighWatermark: lag.Unknown, LastStableOffset: lag.Unknown}
	if c != nil && c.cluster != nil {
		if st, ok := c.cluster.Status(tp); ok {
			src = lag.Source{HighWatermark: st.HighWatermark, LastStableOffset: st.LastStableOffset, MeasuredAt: st.MeasuredAt}
			if fresh != nil {
				src = fresh.source(tp, st.MeasuredAt)
			}
			if st.Err != nil && ps.LastError == "" {
				ps.LastError = st.Err.Error()
			}
		}
	} else if c != nil && c.err != nil && ps.LastError == "" {
		ps.LastError = c.usable().Error()
	}
	if !v.fetchesFromSource() {
		// Failed for good (the source topic was recreated): what the
		// source says now is about another log.
		src = lag.Source{HighWatermark: lag.Unknown, LastStableOffset: lag.Unknown}
	}
	ps.SourceHighWatermark = src.HighWatermark
	dst := lag.Destination{HighWatermark: lag.Unknown, LastStableOffset: lag.Unknown, LogEndOffset: lag.Unknown}
	if lp, err := m.cfg.Destination.MirrorLeader(tp, v.st.LeaderEpoch); err == nil {
		dst = lag.Destination{HighWatermark: lp.HighWatermark(), LastStableOffset: lp.LastStableOffset(), LogEndOffset: lp.LogEndOffset()}
	}
	ps.DestinationHighWatermark, ps.DestinationLogEndOffset = dst.HighWatermark, dst.LogEndOffset
	var age lag.OldestUnservedAge
	if c != nil && c.cluster != nil {
		age = oldestUnservedAge(c, tp, v.fetching())
	}
	l := lag.Of(src, dst, age, m.cfg.Clock.Now())
	ps.Lag, ps.CommittedLag, ps.LagMs, ps.LagMeasuredAt = l.Records, l.Committed, l.Ms, l.MeasuredAt
	return ps
}

// oldestUnservedAge is the age of the source record at the destination's
// high watermark: exact from the head read at that offset
// (source.MeasureHeads, by describe and the manager's measurements).
// While the fetcher runs the destination high watermark moves on between
// them; the fetcher's last answer then bounds it (source.LagSample).
// Otherwise it is unknown.
func oldestUnservedAge(c *mirrorConn, tp storage.TopicPartition, fetching bool) lag.OldestUnservedAge {
	head, headOK := c.cluster.Head(tp)
	sample, sampleOK := c.cluster.Lag(tp)
	return func(offset int64, now time.Time) int64 {
		switch {
		case headOK && head.Offset == offset:
			return head.AgeAt(offset, now.UnixMilli())
		case fetching && sampleOK:
			return sample.LagMs(offset, now)
		}
		return lag.Unknown
	}
}

// Stats are the manager's numbers for metrics.
type Stats struct {
	// Partitions counts the partitions this node leads by state.
	Partitions map[partition.State]int
	// Mirrors are per mirror.
	Mirrors map[string]MirrorStats
}

// MirrorStats is one mirror's numbers on this node.
type MirrorStats struct {
	// Partitions counts the mirror's partitions this node leads by state.
	Partitions map[partition.State]int
	// Lag is each led partition's lag in records (mirror/lag; partitions
	// whose lag is unknown are left out); LagTotal and LagMax sum and
	// bound them.
	Lag              map[storage.TopicPartition]int64
	LagTotal, LagMax int64
	// LagMs is each led partition's LagMs, lag.Unknown included (the RPO
	// guard's gauge compares it with the failover bound).
	LagMs map[storage.TopicPartition]int64
	// LagMsMax is the largest LagMs of the led partitions whose LagMs is
	// known (0 when none is).
	LagMsMax int64
	// LagUnknown counts the led partitions whose lag in records is
	// unknown (the source not measured lately): LagTotal and LagMax are
	// then lower bounds, and the metrics say NaN rather than a number.
	// LagMsUnknown likewise counts those with a lag whose age is unknown.
	LagUnknown, LagMsUnknown int
	// CommittedLagTotal sums the led partitions' committed lag (source LSO
	// − destination LSO: what read_committed consumers of the source read
	// that those of the destination cannot yet); CommittedLagUnknown
	// counts those whose committed lag is unknown.
	CommittedLagTotal   int64
	CommittedLagUnknown int
	// BytesMirrored and RecordsMirrored count what the fetchers appended;
	// FetchErrors the source errors reported; OffsetsSkipped the offsets
	// the source deleted before they were mirrored. Counters since start.
	BytesMirrored, RecordsMirrored, FetchErrors, OffsetsSkipped int64
}

// Stats returns the current numbers.
func (m *Manager) Stats() Stats {
	out := Stats{Partitions: map[partition.State]int{}, Mirrors: map[string]MirrorStats{}}
	byMirror := m.ledViewsByMirror()
	for _, name := range m.counters.names() {
		if _, ok := byMirror[name]; !ok {
			byMirror[name] = nil
		}
	}
	for name, views := range byMirror {
		counters := m.counters.peek(name)
		ms := MirrorStats{Partitions: map[partition.State]int{}, Lag: map[storage.TopicPartition]int64{}, LagMs: map[storage.TopicPartition]int64{},
			BytesMirrored: counters.bytes.Load(), RecordsMirrored: counters.records.Load(),
			FetchErrors: counters.fetchErrors.Load(), OffsetsSkipped: counters.skippedTotal()}
		m.connMu.RLock()
		c := m.conns[name]
		m.connMu.RUnlock()
		for tp, v := range views {
			ps := m.partitionStatus(tp, v, c, counters, nil)
			ms.Partitions[ps.State]++
			out.Partitions[ps.State]++
			if ps.Lag >= 0 {
				ms.Lag[tp] = ps.Lag
				ms.LagTotal += ps.Lag
				ms.LagMax = max(ms.LagMax, ps.Lag)
			} else {
				ms.LagUnknown++
			}
			ms.LagMs[tp] = ps.LagMs
			if ps.LagMs < 0 {
				ms.LagMsUnknown++
			}
			if ps.CommittedLag >= 0 {
				ms.CommittedLagTotal += ps.CommittedLag
			} else {
				ms.CommittedLagUnknown++
			}
			ms.LagMsMax = max(ms.LagMsMax, ps.LagMs)
		}
		out.Mirrors[name] = ms
	}
	return out
}

// counterSet holds the per-mirror counters; they outlive a mirror's
// source connection (a config change reconnects).
type counterSet struct {
	mu       sync.Mutex
	byMirror map[string]*mirrorCounters
}

func (s *counterSet) of(mirror string) *mirrorCounters {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.byMirror[mirror]
	if !ok {
		c = &mirrorCounters{skippedBy: map[storage.TopicPartition]int64{}}
		s.byMirror[mirror] = c
	}
	return c
}

// peek is of without creating: a reader asking about an unknown mirror
// gets zeros.
func (s *counterSet) peek(mirror string) *mirrorCounters {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.byMirror[mirror]; ok {
		return c
	}
	return &mirrorCounters{skippedBy: map[storage.TopicPartition]int64{}}
}

func (s *counterSet) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.byMirror))
	for n := range s.byMirror {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

type mirrorCounters struct {
	bytes, records, fetchErrors atomic.Int64

	mu        sync.Mutex
	skippedBy map[storage.TopicPartition]int64
}

func (c *mirrorCounters) skipped(tp storage.TopicPartition, n int64) {
	c.mu.Lock()
	c.skippedBy[tp] += n
	c.mu.Unlock()
}

func (c *mirrorCounters) skippedOf(tp storage.TopicPartition) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.skippedBy[tp]
}

func (c *mirrorCounters) skippedTotal() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, v := range c.skippedBy {
		n += v
	}
	return n
}
