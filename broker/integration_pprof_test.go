package broker_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/strait-io/strait/broker/brokertest"
)

// getPprof GETs path on the broker's metrics listener and returns the
// status and body.
func getPprof(t *testing.T, b *brokertest.Broker, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get("http://" + b.MetricsAddr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, body
}

// gzipMagic starts every profile runtime/pprof writes in its proto
// format: a gzip-compressed profile.proto.
var gzipMagic = []byte{0x1f, 0x8b}

// pprofPaths are a heap profile and a one-second CPU profile, the two a
// bench run fetches.
var pprofPaths = []string{"/debug/pprof/heap", "/debug/pprof/profile?seconds=1"}

// TestPprofEnabled: with metrics.pprof.enable=true the metrics listener
// serves Go's profiles, gzipped profile.proto, beside /metrics.
func TestPprofEnabled(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithMetrics(), brokertest.WithConfig("metrics.pprof.enable=true"))
	for _, path := range pprofPaths {
		status, body := getPprof(t, b, path)
		if status != http.StatusOK || len(body) <= len(gzipMagic) || !bytes.HasPrefix(body, gzipMagic) {
			t.Errorf("GET %s: status %d, %d bytes starting %q; want 200 and a gzipped profile", path, status, len(body), body[:min(len(body), 16)])
		}
	}
	if status, _ := getPprof(t, b, "/metrics"); status != http.StatusOK {
		t.Errorf("GET /metrics: status %d", status)
	}
}

// TestPprofDisabledByDefault: without the key the profiles are not there
// (they expose the broker's internals), and /metrics still is.
func TestPprofDisabledByDefault(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithMetrics())
	for _, path := range append(pprofPaths, "/debug/pprof/") {
		if status, _ := getPprof(t, b, path); status != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, status)
		}
	}
	if status, _ := getPprof(t, b, "/metrics"); status != http.StatusOK {
		t.Errorf("GET /metrics: status %d", status)
	}
}
