package brokertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestPortLeases: a port leased to a live process is not drawn again,
// neither by this process nor by another; a dead process's lease is taken
// over; a released one is free.
func TestPortLeases(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // a lease directory of its own
	const port = 12345

	l, ok, err := leasePort(port)
	if err != nil || !ok {
		t.Fatalf("first lease: ok=%v err=%v", ok, err)
	}
	if _, ok, err := leasePort(port); err != nil || ok {
		t.Fatalf("second lease of a held port: ok=%v err=%v, want refused", ok, err)
	}
	l.release()
	if l, ok, err = leasePort(port); err != nil || !ok {
		t.Fatalf("lease after release: ok=%v err=%v", ok, err)
	}
	l.release()

	// Another live process's lease (the parent's pid) is refused.
	path := filepath.Join(leaseDir(), strconv.Itoa(port))
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getppid())), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := leasePort(port); err != nil || ok {
		t.Fatalf("lease held by a live process: ok=%v err=%v, want refused", ok, err)
	}

	// A dead process's lease is taken over.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	l, ok, err = leasePort(port)
	if err != nil || !ok {
		t.Fatalf("lease of a dead process: ok=%v err=%v, want taken over", ok, err)
	}
	if b, _ := os.ReadFile(path); string(b) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lease holds %q, want this process's pid", b)
	}
	l.release()

	// FreePorts leases what it draws until the test ends.
	t.Run("FreePorts", func(t *testing.T) {
		for _, p := range FreePorts(t, 3) {
			if _, ok, _ := leasePort(p); ok {
				t.Fatalf("port %d drawn by FreePorts is not leased", p)
			}
		}
	})
	entries, err := os.ReadDir(leaseDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("%d leases left after the test that drew them ended", len(entries))
	}
}
