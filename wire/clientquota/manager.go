package clientquota

import (
	"sync"
	"time"

	"github.com/strait-io/strait/storage/quota"
)

// Kind is the quota a usage counts against (Kafka's QuotaType).
type Kind uint8

const (
	// Produce counts produce request bytes (producer_byte_rate).
	Produce Kind = iota
	// Fetch counts consumer fetch response bytes (consumer_byte_rate).
	Fetch
	// Request counts request handling time as a percentage of one
	// thread (request_percentage, KIP-124).
	Request
)

// sensorExpiry is how long a sensor nobody records into is kept (Kafka's
// ClientQuotaManager.InactiveSensorExpirationTimeSeconds).
const sensorExpiry = time.Hour

type sensorKey struct {
	kind         Kind
	user, client string
}

type sensor struct {
	rate     *quota.Rate
	lastUsed time.Time
}

// Manager holds the sensors of every quota entity in use. It is safe for
// concurrent use.
type Manager struct {
	w Window

	mu        sync.Mutex
	sensors   map[sensorKey]*sensor
	lastSweep time.Time
}

// NewManager returns a Manager sampling rates with w; a zero field takes
// DefaultWindow's.
func NewManager(w Window) *Manager {
	if w.Samples <= 0 {
		w.Samples = DefaultWindow.Samples
	}
	if w.Size <= 0 {
		w.Size = DefaultWindow.Size
	}
	return &Manager{w: w, sensors: map[sensorKey]*sensor{}}
}

// Record adds v to the usage of kind of the entity the quota's user and
// client tags name (clients with the same tags share a sensor, as Kafka's
// quota metric tags make them) and returns how long the client must be
// throttled for the rate to come back to bound (0: within it). The usage
// is recorded whether or not it is over: the request was served.
func (m *Manager) Record(kind Kind, user, client string, bound, v float64, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweepLocked(now)
	k := sensorKey{kind: kind, user: user, client: client}
	s := m.sensors[k]
	if s == nil {
		s = &sensor{rate: quota.NewRate(m.w.Samples, m.w.Size)}
		m.sensors[k] = s
	}
	s.lastUsed = now
	s.rate.Record(v, now)
	return throttle(s.rate, bound, now)
}

// sweepLocked drops, at most once a minute, the sensors unused for
// sensorExpiry, so clients that come and go do not grow the map.
func (m *Manager) sweepLocked(now time.Time) {
	if now.Sub(m.lastSweep) < time.Minute {
		return
	}
	m.lastSweep = now
	for k, s := range m.sensors {
		if now.Sub(s.lastUsed) > sensorExpiry {
			delete(m.sensors, k)
		}
	}
}
