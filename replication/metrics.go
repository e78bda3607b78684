package replication

// Metrics receives the per-topic byte and message rates Kafka reports as
// BrokerTopicMetrics (BytesInPerSec, MessagesInPerSec, BytesOutPerSec). The
// broker backs it with Prometheus counters. Calls come from request
// goroutines concurrently and must not block.
type Metrics interface {
	// BytesIn counts bytes appended by clients (not duplicates).
	BytesIn(topic string, n int64)
	// MessagesIn counts records appended by clients.
	MessagesIn(topic string, n int64)
	// BytesOut counts record bytes returned to consumers (follower
	// fetches are replication traffic and are not counted).
	BytesOut(topic string, n int64)
}

type nopMetrics struct{}

func (nopMetrics) BytesIn(string, int64)    {}
func (nopMetrics) MessagesIn(string, int64) {}
func (nopMetrics) BytesOut(string, int64)   {}
