package manager

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/strait-io/strait/mirror/lag"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/storage"
)

// measureTimeout bounds one mirror's measurement round: a source that
// does not answer leaves the last measurement to age into "unknown"
// (lag.StaleAfter) instead of holding the loop.
const measureTimeout = 2 * time.Second

// measureLoop keeps the lag's source side measured for the partitions
// whose fetcher does not run (PAUSED, PREPARING, FAILED, or MIRRORING
// while waiting to start fetching): without it their source high
// watermark freezes where the fetcher left it and the lag reads 0 while
// the source moves on (issue 33). One ListOffsets round per mirror per
// lag.PollInterval at most; the fetch answers measure the others.
func (m *Manager) measureLoop() {
	tick := time.NewTicker(lag.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-tick.C:
		}
		m.measureOnce(m.ctx)
	}
}

// measureOnce runs one round: every mirror at once, so a source that
// does not answer delays no other. The partitions no fetcher measures get
// their source offsets (ListOffsets); then every led partition that lags
// gets the timestamp of the source record at its destination high
// watermark (source.MeasureHeads), the exact lag in milliseconds, asked
// once per destination high watermark.
func (m *Manager) measureOnce(ctx context.Context) {
	unfetched := m.unfetchedPartitions()
	var wg sync.WaitGroup
	for name, views := range m.ledViewsByMirror() {
		m.connMu.RLock()
		c := m.conns[name]
		m.connMu.RUnlock()
		if c == nil || c.cluster == nil {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, measureTimeout)
			defer cancel()
			if _, _, err := c.cluster.MeasureLatest(ctx, unfetched[name]); err != nil && ctx.Err() == nil {
				m.logger.Debug("mirror lag: cannot measure the source", "mirror", name, "err", err)
			}
			m.measureHeads(ctx, name, c, views, nil)
		})
	}
	wg.Wait()
}

// measureHeads reads the source record at the destination high watermark
// of each partition of views that lags: source HW (fresh's, else the last
// measured) above the destination HW, and no head read yet at that
// offset (a record's timestamp does not change, so a paused partition
// costs one read per destination HW, not one per round).
func (m *Manager) measureHeads(ctx context.Context, mirror string, c *mirrorConn, views map[storage.TopicPartition]view, fresh *freshSource) {
	offsets := map[storage.TopicPartition]int64{}
	for tp, v := range views {
		if !v.fetchesFromSource() {
			continue
		}
		srcHW := int64(lag.Unknown)
		if fresh != nil {
			if l, ok := fresh.latest[tp]; ok {
				srcHW = l.HighWatermark
			}
		} else if st, ok := c.cluster.Status(tp); ok {
			srcHW = st.HighWatermark
		}
		lp, err := m.cfg.Destination.MirrorLeader(tp, v.st.LeaderEpoch)
		if err != nil {
			continue
		}
		dstHW := lp.HighWatermark()
		if dstHW < 0 || srcHW <= dstHW {
			continue
		}
		if h, ok := c.cluster.Head(tp); ok && h.Offset == dstHW {
			continue
		}
		offsets[tp] = dstHW
	}
	if err := c.cluster.MeasureHeads(ctx, offsets); err != nil && ctx.Err() == nil {
		m.logger.Debug("mirror lag: cannot read the oldest unmirrored source records", "mirror", mirror, "err", err)
	}
}

// unfetchedPartitions are the led partitions, by mirror, that no fetcher
// measures: not MIRRORING, or MIRRORING but waiting. Partitions FAILED
// for good are left out (their source log is another one).
func (m *Manager) unfetchedPartitions() map[string][]storage.TopicPartition {
	out := map[string][]storage.TopicPartition{}
	for name, views := range m.ledViewsByMirror() {
		for tp, v := range views {
			if v.fetchesFromSource() && !v.fetching() {
				out[name] = append(out[name], tp)
			}
		}
	}
	return out
}

// ledViewsByMirror is ledViews for every mirror with a led partition.
func (m *Manager) ledViewsByMirror() map[string]map[storage.TopicPartition]view {
	m.viewMu.Lock()
	defer m.viewMu.Unlock()
	out := map[string]map[storage.TopicPartition]view{}
	for tp, v := range m.views {
		if !v.st.Leader || v.st.Mirror == "" {
			continue
		}
		if out[v.st.Mirror] == nil {
			out[v.st.Mirror] = map[storage.TopicPartition]view{}
		}
		out[v.st.Mirror][tp] = v
	}
	return out
}

// ledViews are the partitions of mirror this node leads.
func (m *Manager) ledViews(mirror string) map[storage.TopicPartition]view {
	m.viewMu.Lock()
	defer m.viewMu.Unlock()
	out := map[storage.TopicPartition]view{}
	for tp, v := range m.views {
		if v.st.Leader && v.st.Mirror == mirror {
			out[tp] = v
		}
	}
	return out
}

// fetchesFromSource reports whether the partition's source log is the one
// it mirrors: not FAILED for good (the source topic was recreated).
func (v view) fetchesFromSource() bool {
	rec := v.st.Record
	return !(rec.State == partition.StateFailed && rec.RetryAttempt < 0)
}

// fetching reports whether the partition's fetcher runs (MIRRORING, not
// waiting): its fetch answers measure the source.
func (v view) fetching() bool {
	return v.st.Record.State == partition.StateMirroring && v.st.Waiting == nil
}

// freshSource is a measurement of the source taken for one describe.
type freshSource struct {
	latest map[storage.TopicPartition]source.Latest
	at     time.Time
}

// source is tp's side of the lag from f, or unknown (with the time of the
// last successful measurement, last) when f has none for it.
func (f *freshSource) source(tp storage.TopicPartition, last time.Time) lag.Source {
	l, ok := f.latest[tp]
	if !ok {
		return lag.Source{HighWatermark: lag.Unknown, LastStableOffset: lag.Unknown, MeasuredAt: last}
	}
	return lag.Source{HighWatermark: l.HighWatermark, LastStableOffset: l.LastStableOffset, MeasuredAt: f.at}
}

// PartitionsMeasured is Partitions with the source measured for the
// call (ListOffsets, within describeMeasureTimeout): DescribeMirrors'
// answer. A lag of 0 then means that the destination's consumers can read
// everything the source's consumers could when describe was asked, which
// a measurement taken before (the last fetch answer) cannot promise while
// the source is written to (issue 33's "done when"). A partition the
// source did not answer for has an unknown lag, with the time of its last
// successful measurement.
func (m *Manager) PartitionsMeasured(ctx context.Context, mirror string) []PartitionStatus {
	m.connMu.RLock()
	c := m.conns[mirror]
	m.connMu.RUnlock()
	fresh := &freshSource{}
	if c != nil && c.cluster != nil {
		views := m.ledViews(mirror)
		ctx, cancel := context.WithTimeout(ctx, describeMeasureTimeout)
		defer cancel()
		var err error
		if fresh.latest, fresh.at, err = c.cluster.MeasureLatest(ctx, slices.Collect(maps.Keys(views))); err != nil {
			m.logger.Debug("mirror lag: cannot measure the source for describe", "mirror", mirror, "err", err)
		}
		m.measureHeads(ctx, mirror, c, views, fresh)
	}
	return m.partitions(mirror, fresh)
}

// describeMeasureTimeout bounds the source measurement of one describe: a
// source that does not answer makes the lag unknown rather than the
// describe slow (the broker fans describe out within 5s).
const describeMeasureTimeout = time.Second
