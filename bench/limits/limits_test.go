package limits

import (
	"context"
	"os"
	"path/filepath"
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
	want := []string{AppendBuffered, AppendFsync, LoopbackTCP, SendfileLoopback, MemoryFirstTouch, MemoryRewrite}
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
	first, _ := res.Get(MemoryFirstTouch)
	again, _ := res.Get(MemoryRewrite)
	if first.Bytes != again.Bytes || first.Bytes%int64(16<<10) != 0 {
		t.Errorf("memory probes wrote %d and %d bytes, want the same pages, whole writes", first.Bytes, again.Bytes)
	}
	if res.SyscallNanos <= 0 {
		t.Errorf("system call probe: %.0f ns", res.SyscallNanos)
	}
	t.Logf("system call: %.0f ns", res.SyscallNanos)
	if res.FS == "unknown" {
		t.Errorf("fs type of %s unknown", cfg.Dir)
	}
}

// TestPageReporting reads free page reporting from a sysfs tree: the
// virtio balloon's feature bit 5, and the reporting order when the kernel
// shows it.
func TestPageReporting(t *testing.T) {
	write := func(t *testing.T, root, path, text string) {
		t.Helper()
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const features = "bus/virtio/drivers/virtio_balloon/virtio0/features"
	for _, tc := range []struct {
		name, features, order, want string
	}{
		{"no balloon", "", "", ""},
		{"balloon without reporting", "0110000100000000\n", "9\n", ""},
		{"reporting", "0110010100000000\n", "9\n", "on (virtio balloon, blocks of order 9 and up)"},
		{"reporting, order unknown", "0110010100000000\n", "", "on (virtio balloon)"},
		{"reporting above the largest order", "0110010100000000\n", "11\n", "off (virtio balloon offers it, but its order 11 is above the largest block, order 10)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.features != "" {
				write(t, root, features, tc.features)
			}
			if tc.order != "" {
				write(t, root, "module/page_reporting/parameters/page_reporting_order", tc.order)
			}
			write(t, root, "buddyinfo", "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"+
				"Node 0, zone   Normal  14302   6599   6280   7879   9505   7623   6041   4271   3255   1717   1828 \n")
			if got := pageReporting(root, root); got != tc.want {
				t.Fatalf("pageReporting = %q, want %q", got, tc.want)
			}
		})
	}
}
