package limits

import (
	"context"
	"testing"
	"time"
)

// TestRun runs every probe briefly and checks each moved bytes without an
// error; the figures themselves are machine-dependent and not asserted.
func TestRun(t *testing.T) {
	cfg := Config{Dir: t.TempDir(), Time: 100 * time.Millisecond, MaxFileBytes: 1 << 20}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{AppendBuffered, AppendFsync, LoopbackTCP, SendfileLoopback}
	if len(res.Probes) != len(want) {
		t.Fatalf("got %d probes, want %d", len(res.Probes), len(want))
	}
	for i, p := range res.Probes {
		if p.Name != want[i] {
			t.Errorf("probe %d is %q, want %q", i, p.Name, want[i])
		}
		if p.Err != "" {
			t.Errorf("%s: %s", p.Name, p.Err)
		}
		if p.Bytes <= 0 || p.Elapsed <= 0 {
			t.Errorf("%s: bytes %d elapsed %v, want both > 0", p.Name, p.Bytes, p.Elapsed)
		}
		t.Logf("%s: %.1f MiB/s", p.Name, p.MiBPerSec)
	}
	fs, _ := res.Get(AppendFsync)
	if fs.Syncs != fs.Bytes/int64(16<<10) {
		t.Errorf("fsync probe: %d syncs for %d bytes, want one per 16 KiB", fs.Syncs, fs.Bytes)
	}
	if res.FS == "unknown" {
		t.Errorf("fs type of %s unknown", cfg.Dir)
	}
}
