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

// ListenerMetrics receives the acceptors' measurements. A Metrics that
// also implements it gets them; the others do not.
type ListenerMetrics interface {
	// AcceptFailed counts an accept(2) that failed, or a connection the
	// event loops could not take, on listener; reason is "EMFILE",
	// "ENFILE", "ENOBUFS", "ENOMEM" or "other".
	AcceptFailed(listener, reason string)
	// ConnectionRejected counts a connection closed as it arrived
	// because of a connection quota; reason is RejectedPerIP.
	ConnectionRejected(listener, reason string)
	// AcceptorBlocked records how long listener's acceptor waited for a
	// connection slot under max.connections (Kafka's
	// AcceptorBlockedPercent).
	AcceptorBlocked(listener string, d time.Duration)
}

// RejectedPerIP is the reason of a connection refused because its address
// already had max.connections.per.ip (or its override) connections.
const RejectedPerIP = "per_ip"

// AcceptFailed implements ListenerMetrics.
func (NopMetrics) AcceptFailed(string, string) {}

// ConnectionRejected implements ListenerMetrics.
func (NopMetrics) ConnectionRejected(string, string) {}

// AcceptorBlocked implements ListenerMetrics.
func (NopMetrics) AcceptorBlocked(string, time.Duration) {}

// AuthMetrics receives the SASL authenticator's measurements (Kafka's
// successful-authentication-total, failed-authentication-total and their
// re-authentication counterparts). A Metrics that also implements it gets
// them; the others do not.
type AuthMetrics interface {
	// Authenticated counts a completed authentication on listener with
	// mechanism; reauth marks a KIP-368 re-authentication.
	Authenticated(listener, mechanism string, reauth bool)
	// AuthenticationFailed counts a connection closed because its
	// authentication failed (bad credentials, an unsupported mechanism, a
	// request out of order or too large before authenticating);
	// mechanism is "" when none was chosen yet.
	AuthenticationFailed(listener, mechanism string, reauth bool)
}

// Authenticated implements AuthMetrics.
func (NopMetrics) Authenticated(string, string, bool) {}

// AuthenticationFailed implements AuthMetrics.
func (NopMetrics) AuthenticationFailed(string, string, bool) {}
