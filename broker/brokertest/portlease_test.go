package brokertest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// leaseHolderEnv makes TestPortLeaseHolder, in a child test binary, hold
// the lease of the port it names until it is killed.
const leaseHolderEnv = "STRAIT_TEST_PORT_LEASE_HOLDER"

// TestPortLeaseHolder is the other process of TestPortLeases; it does
// nothing in a normal run.
func TestPortLeaseHolder(t *testing.T) {
	port, err := strconv.Atoi(os.Getenv(leaseHolderEnv))
	if err != nil {
		t.Skip("only as TestPortLeases' child")
	}
	if _, ok, err := leasePort(port); err != nil || !ok {
		t.Fatalf("holder: ok=%v err=%v", ok, err)
	}
	os.Stdout.WriteString("held\n")
	select {} // until killed
}

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

	// Another live process's lease is refused.
	holder := exec.Command(os.Args[0], "-test.run=^TestPortLeaseHolder$")
	holder.Env = append(os.Environ(), leaseHolderEnv+"="+strconv.Itoa(port))
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("holder said %q, %v", line, err)
	}
	path := filepath.Join(leaseDir(), strconv.Itoa(port))
	if b, _ := os.ReadFile(path); string(b) != strconv.Itoa(holder.Process.Pid) {
		t.Fatalf("lease holds %q, want the holder's pid %d", b, holder.Process.Pid)
	}
	if _, ok, err := leasePort(port); err != nil || ok {
		t.Fatalf("lease held by a live process: ok=%v err=%v, want refused", ok, err)
	}

	// A dead process's lease is taken over.
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
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
