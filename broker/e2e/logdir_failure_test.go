package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFailedDiskHaltsTheBinary: when writing the log directory fails, the
// strait process exits with status 1 and says why, as Kafka halts a
// broker whose log directories have all failed; started again on a
// working disk, it recovers what it had acknowledged. The disk failure is
// the immutable attribute on the partition's segment (chattr +i), which
// makes the append's write fail with EPERM even for root.
func TestFailedDiskHaltsTheBinary(t *testing.T) {
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		t.Skip("*** chattr (Debian's e2fsprogs) is not installed: SKIPPING the failed-disk test ***")
	}
	const topic = "disk"
	n := newNode(t)
	p := n.start()
	createTopic(t, newAdmin(t, n.kafkaAddr()), topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod := newClient(t, n.kafkaAddr(), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(5*time.Second))
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	segment := filepath.Join(n.logDir, topic+"-0", "00000000000000000000.log")
	if out, err := exec.Command(chattr, "+i", segment).CombinedOutput(); err != nil {
		t.Skipf("*** chattr +i %s failed (%v: %s); it needs root and a file system with the attribute (ext4, xfs): SKIPPING the failed-disk test ***",
			segment, err, strings.TrimSpace(string(out)))
	}
	// Runs before the TempDir cleanup, which could not remove the file.
	t.Cleanup(func() { _ = exec.Command(chattr, "-i", segment).Run() })

	prod.Produce(ctx, &kgo.Record{Value: []byte("during")}, func(*kgo.Record, error) {})
	code, err := p.wait(15 * time.Second)
	if err != nil {
		t.Fatalf("the broker did not exit after its disk failed: %v\nstderr:\n%s", err, tail(p.stderr(), 3000))
	}
	const want = "strait serve: halted: storage: append failed in "
	if code != 1 || !strings.Contains(p.stderr(), want) {
		t.Fatalf("exit status %d, want 1 with %q on stderr:\n%s", code, want, tail(p.stderr(), 3000))
	}
	t.Logf("halted: %s", strings.TrimSpace(p.linesWith("strait serve: halted")[0]))

	if out, err := exec.Command(chattr, "-i", segment).CombinedOutput(); err != nil {
		t.Fatalf("chattr -i: %v: %s", err, out)
	}
	n.start()
	recs, ends := readAll(t, n.kafkaAddr(), topic)
	if len(recs) != 1 || recs[0].value != "before" || ends[0] != 1 {
		t.Fatalf("after the restart %s holds %+v (end %d), want the acknowledged record alone", topic, recs, ends[0])
	}
}
