package wire

import "time"

// Metrics receives the socket server's measurements; the broker backs it
// with Prometheus collectors so this package does not import Prometheus.
// Methods are called from event loops and request goroutines and must not
// block.
type Metrics interface {
	// RequestDone records one request from the moment its frame was read
	// to the moment its response was handed to the socket (Kafka's
	// RequestChannel TotalTimeMs). err is true when the request closed
	// the connection instead of being answered.
	RequestDone(key, version int16, dur time.Duration, err bool)
	// BytesIn counts request bytes read, size prefix included.
	BytesIn(n int)
	// BytesOut counts response bytes handed to the socket.
	BytesOut(n int)
	ConnOpened()
	ConnClosed()
}

// NopMetrics discards every measurement.
type NopMetrics struct{}

// RequestDone implements Metrics.
func (NopMetrics) RequestDone(int16, int16, time.Duration, bool) {}

// BytesIn implements Metrics.
func (NopMetrics) BytesIn(int) {}

// BytesOut implements Metrics.
func (NopMetrics) BytesOut(int) {}

// ConnOpened implements Metrics.
func (NopMetrics) ConnOpened() {}

// ConnClosed implements Metrics.
func (NopMetrics) ConnClosed() {}
