package manager

import (
	"context"
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
// does not answer delays no other.
func (m *Manager) measureOnce(ctx context.Context) {
	byMirror := m.unfetchedPartitions()
	var wg sync.WaitGroup
	for name, tps := range byMirror {
		m.connMu.RLock()
		c := m.conns[name]
		m.connMu.RUnlock()
		if c == nil || c.cluster == nil {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, measureTimeout)
			defer cancel()
			if _, _, err := c.cluster.MeasureLatest(ctx, tps); err != nil && ctx.Err() == nil {
				m.logger.Debug("mirror lag: cannot measure the source", "mirror", name, "err", err)
			}
		})
	}
	wg.Wait()
}

// unfetchedPartitions are the led partitions, by mirror, that no fetcher
// measures: not MIRRORING, or MIRRORING but waiting. Partitions FAILED
// for good are left out (their source log is another one).
func (m *Manager) unfetchedPartitions() map[string][]storage.TopicPartition {
	m.viewMu.Lock()
	defer m.viewMu.Unlock()
	out := map[string][]storage.TopicPartition{}
	for tp, v := range m.views {
		rec := v.st.Record
		switch {
		case !v.st.Leader || v.st.Mirror == "":
		case rec.State == partition.StateFailed && rec.RetryAttempt < 0:
		case rec.State == partition.StateMirroring && v.st.Waiting == nil:
		default:
			out[v.st.Mirror] = append(out[v.st.Mirror], tp)
		}
	}
	return out
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
		var tps []storage.TopicPartition
		m.viewMu.Lock()
		for tp, v := range m.views {
			if v.st.Leader && v.st.Mirror == mirror {
				tps = append(tps, tp)
			}
		}
		m.viewMu.Unlock()
		ctx, cancel := context.WithTimeout(ctx, describeMeasureTimeout)
		defer cancel()
		var err error
		if fresh.latest, fresh.at, err = c.cluster.MeasureLatest(ctx, tps); err != nil {
			m.logger.Debug("mirror lag: cannot measure the source for describe", "mirror", mirror, "err", err)
		}
	}
	return m.partitions(mirror, fresh)
}

// describeMeasureTimeout bounds the source measurement of one describe: a
// source that does not answer makes the lag unknown rather than the
// describe slow (the broker fans describe out within 5s).
const describeMeasureTimeout = time.Second
