// Package clientquota measures clients' usage against their quotas as
// Kafka's ClientQuotaManager does (KIP-13, KIP-124, KIP-219): a sensor per
// quota entity holds a rate over Samples windows of Window each (Kafka's
// Rate, storage/quota's, shared with the replication throttles), and a
// request that takes the rate past the quota gets a throttle time, in
// Kafka's formula, during which the server sends its response and then
// reads nothing more from the connection.
package clientquota

import (
	"math"
	"time"

	"github.com/strait-io/strait/storage/quota"
)

// Window is the rate's sampling: quota.window.num samples of
// quota.window.size.seconds.
type Window struct {
	Samples int
	Size    time.Duration
}

// DefaultWindow is Kafka's default: 11 windows of 1 s.
var DefaultWindow = Window{Samples: 11, Size: time.Second}

// throttle is the time the client must wait so that the rate comes back
// to bound (ClientQuotaManager.throttleTime): the excess over the bound,
// as a fraction of it, times the window the rate spans; 0 when the rate
// is within the bound.
func throttle(r *quota.Rate, bound float64, now time.Time) time.Duration {
	v := r.Measure(now)
	if v <= bound || bound <= 0 {
		return 0
	}
	ms := (v - bound) / bound * float64(r.WindowSize(now).Milliseconds())
	return time.Duration(math.Round(ms)) * time.Millisecond
}
