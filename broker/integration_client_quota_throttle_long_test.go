//go:build long

package broker_test

import (
	"testing"
	"time"
)

// TestClientQuotaThrottlesProducerDefaultWindow is the quota test with
// Kafka's default sampling (11 windows of 1 s), measured over 8 of its
// bursts' periods from the start.
func TestClientQuotaThrottlesProducerDefaultWindow(t *testing.T) {
	checkQuotaRates(t, 0, 88*time.Second)
}
