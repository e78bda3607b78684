package manager

import (
	"context"
	"sync"
	"time"

	"github.com/strait-io/strait/mirror/lag"
	"github.com/strait-io/strait/mirror/partition"
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
			if err := c.cluster.MeasureLatest(ctx, tps); err != nil && ctx.Err() == nil {
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
