package broker_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// scrape reads the broker's metrics endpoint.
func scrape(t testing.TB, b *brokertest.Broker) []byte {
	t.Helper()
	resp, err := http.Get("http://" + b.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	return body
}

// metricValue is the value of one series in a scrape, and whether it is
// there.
func metricValue(t testing.TB, body []byte, series string) (float64, bool) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

// waitMetric waits until series reads want. A request is counted just
// after its response is queued, so a client may see the response a
// moment before the count moves; counters only grow, so a value above
// want never comes back down and the wait fails.
func waitMetric(t testing.TB, b *brokertest.Broker, series string, want float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, ok := metricValue(t, scrape(t, b), series)
		if ok && v == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v (present %v), want %v", series, v, ok, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMetricsEndpoint serves Prometheus metrics with per-API request
// counts and latencies that match the traffic sent.
func TestMetricsEndpoint(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithMetrics())
	if b.MetricsAddr() == "" {
		t.Fatal("no metrics listener")
	}
	createTopic(t, b.Admin(t), "m", 1)
	const produces = 7
	cl := b.Client(t, kgo.DefaultProduceTopic("m"), kgo.ProducerLinger(0))
	for i := 0; i < produces; i++ {
		produceSync(t, cl, kgo.StringRecord(fmt.Sprint(i)))
	}
	consumeN(t, b, produces, []string{"m"})

	waitMetric(t, b, `strait_requests_total{api="Produce"}`, produces)
	waitMetric(t, b, `strait_request_duration_seconds_count{api="Produce"}`, produces)
	waitMetric(t, b, `strait_requests_total{api="CreateTopics"}`, 1)
	body := scrape(t, b)
	for _, s := range []string{`strait_requests_total{api="ApiVersions"}`, `strait_requests_total{api="Metadata"}`,
		`strait_requests_total{api="Fetch"}`, `strait_requests_total{api="InitProducerID"}`,
		`strait_network_bytes_in_total`, `strait_network_bytes_out_total`, `strait_connections_total`, `strait_connections`,
		`strait_memory_pool_available_bytes`} {
		if v, ok := metricValue(t, body, s); !ok || v < 1 {
			t.Fatalf("%s = %v (present %v), want at least 1", s, v, ok)
		}
	}
	for _, s := range []string{`strait_memory_pool_used_bytes`, `strait_memory_pool_waits_total`} {
		if _, ok := metricValue(t, body, s); !ok {
			t.Fatalf("%s missing", s)
		}
	}
	if _, ok := metricValue(t, body, `strait_requests_total{api="DeleteTopics"}`); ok {
		t.Fatal("DeleteTopics counted without any DeleteTopics request")
	}
	// The counters move with more traffic.
	produceSync(t, cl, kgo.StringRecord("one more"))
	waitMetric(t, b, `strait_requests_total{api="Produce"}`, produces+1)
}
