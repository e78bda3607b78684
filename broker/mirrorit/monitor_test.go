package mirrorit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// hwMonitor samples the destination's high watermarks of a topic every
// 50 ms and records every decrease: a mirror that truncated data a
// consumer could already read.
type hwMonitor struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	last      map[int32]int64
	samples   int
	decreases []string
}

func monitorHW(t testing.TB, ctx context.Context, s *side, topic string) *hwMonitor {
	t.Helper()
	adm := s.admin(t)
	mctx, cancel := context.WithCancel(ctx)
	m := &hwMonitor{cancel: cancel, done: make(chan struct{}), last: map[int32]int64{}}
	go func() {
		defer close(m.done)
		for mctx.Err() == nil {
			l, err := adm.ListEndOffsets(mctx, topic)
			if err == nil {
				m.mu.Lock()
				m.samples++
				l.Each(func(o kadm.ListedOffset) {
					if o.Err != nil {
						return
					}
					if prev, ok := m.last[o.Partition]; ok && o.Offset < prev {
						m.decreases = append(m.decreases, fmt.Sprintf("p%d: %d → %d", o.Partition, prev, o.Offset))
					}
					m.last[o.Partition] = max(m.last[o.Partition], o.Offset)
				})
				m.mu.Unlock()
			}
			select {
			case <-mctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return m
}

// stop ends sampling and returns the number of samples and the decreases.
func (m *hwMonitor) stop() (int, []string) {
	m.cancel()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.samples, m.decreases
}
