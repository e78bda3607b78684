package config

import (
	"math"
	"testing"

	"github.com/strait-io/strait/storage"
)

// The cleaner's keys, static and dynamic (the dynamic layers win), as the
// storage cleaner takes them.
func TestLogCleanerFrom(t *testing.T) {
	c, err := New(map[string]string{"log.cleaner.backoff.ms": "2000", "log.cleaner.threads": "2"})
	if err != nil {
		t.Fatal(err)
	}
	got := c.LogCleaner()
	want := storage.CleanerConfig{Threads: 2, BackoffMs: 2000, DedupeBufferSize: 128 << 20, LoadFactor: 0.9, IoMaxBytesPerSecond: math.MaxFloat64}
	if got != want {
		t.Fatalf("static: %+v, want %+v", got, want)
	}
	got = LogCleanerFrom(c.Sources(
		map[string]string{"log.cleaner.backoff.ms": "100", "log.cleaner.io.max.bytes.per.second": "1e6"},
		map[string]string{"log.cleaner.threads": "3"}))
	want.BackoffMs, want.Threads, want.IoMaxBytesPerSecond = 100, 3, 1e6
	if got != want {
		t.Fatalf("dynamic: %+v, want %+v", got, want)
	}
	for _, props := range []map[string]string{{"log.cleaner.threads": "0"}, {"log.cleaner.enable": "false"}} {
		c, err := New(props)
		if err != nil {
			t.Fatal(err)
		}
		if !c.LogCleaner().Disable {
			t.Errorf("%v: the cleaner is not disabled", props)
		}
	}
	if c, _ := New(map[string]string{"log.cleaner.backoff.ms": "0"}); c.LogCleaner().BackoffMs != 1 {
		t.Errorf("log.cleaner.backoff.ms=0: backoff %d, want no rest", c.LogCleaner().BackoffMs)
	}
}
