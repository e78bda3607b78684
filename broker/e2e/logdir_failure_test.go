package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/wire/rawconn"
)

// TestFailedDiskHaltsTheBinary: when writing the log directory fails, the
// strait process exits with status 1 and says why, as Kafka halts a
// broker whose log directories have all failed; started again on a
// working disk, it recovers what it had acknowledged. The disk failure is
// the immutable attribute on the partition's segment (chattr +i), which
// makes the append's write fail with EPERM even for root.
func TestFailedDiskHaltsTheBinary(t *testing.T) {
	chattr := chattrBin(t, "the failed-disk test")
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
	unfreeze := freeze(t, chattr, "the failed-disk test", segment)

	prod.Produce(ctx, &kgo.Record{Value: []byte("during")}, func(*kgo.Record, error) {})
	waitHalted(t, p, 15*time.Second, "storage: append failed in ", "operation not permitted")

	unfreeze()
	n.start()
	recs, ends := readAll(t, n.kafkaAddr(), topic)
	if len(recs) != 1 || recs[0].value != "before" || ends[0] != 1 {
		t.Fatalf("after the restart %s holds %+v (end %d), want the acknowledged record alone", topic, recs, ends[0])
	}
}

// TestFailedMetadataDiskHaltsTheBinary: the files of the raft log under the
// metadata log directory become immutable (chattr +i), and the next
// metadata write fails with EPERM. As Kafka halts a node whose metadata
// log directory failed, the broker exits with status 1 and says why;
// started again on a working disk, it has the topic created before. Before,
// pebble's failed commit panicked the process (exit 2, a goroutine dump).
func TestFailedMetadataDiskHaltsTheBinary(t *testing.T) {
	chattr := chattrBin(t, "the failed-metadata-disk test")
	n := newNode(t)
	p := n.start()
	adm := newAdmin(t, n.kafkaAddr())
	createTopic(t, adm, "before", 1)

	raftDir := filepath.Join(n.logDir, "__cluster_metadata", "raft")
	files, err := filepath.Glob(filepath.Join(raftDir, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no raft store files in %s: %v", raftDir, err)
	}
	unfreeze := freeze(t, chattr, "the failed-metadata-disk test", append(files, raftDir)...)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = adm.CreateTopic(ctx, 1, 1, nil, "during") // its metadata record cannot be stored
	waitHalted(t, p, 15*time.Second, "metadata log directory failed: ", "operation not permitted")

	unfreeze()
	n.start()
	topics, err := newAdmin(t, n.kafkaAddr()).ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !topics.Has("before") {
		t.Fatalf("after the restart the broker has topics %v, want %q among them", topics.Names(), "before")
	}
}

// chattrBin is chattr's path, or skips test loudly where it is missing.
func chattrBin(t *testing.T, test string) string {
	t.Helper()
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		t.Skipf("*** chattr (Debian's e2fsprogs) is not installed: SKIPPING %s ***", test)
	}
	return chattr
}

// freeze makes files immutable (chattr +i), so that writing them fails
// with EPERM even for root, or skips test loudly where it cannot (not
// root, or a file system without the attribute). unfreeze lifts it again;
// it also runs at cleanup, before the TempDir cleanup, which could not
// remove the files.
func freeze(t *testing.T, chattr, test string, files ...string) (unfreeze func()) {
	t.Helper()
	if out, err := exec.Command(chattr, append([]string{"+i"}, files...)...).CombinedOutput(); err != nil {
		t.Skipf("*** chattr +i %s failed (%v: %s); it needs root and a file system with the attribute (ext4, xfs): SKIPPING %s ***",
			strings.Join(files, " "), err, strings.TrimSpace(string(out)), test)
	}
	t.Cleanup(func() { _ = exec.Command(chattr, append([]string{"-i"}, files...)...).Run() })
	return func() {
		t.Helper()
		if out, err := exec.Command(chattr, append([]string{"-i"}, files...)...).CombinedOutput(); err != nil {
			t.Fatalf("chattr -i: %v: %s", err, out)
		}
	}
}

// TestFullDiskHaltsTheBinaryAndNothingIsLost: the log directory fills up
// under an idempotent acks=all producer. The broker halts, as Kafka does
// when its only log directory fails (so reads stop too until the restart,
// as Kafka's do); the operator grows the disk and starts it again; recovery
// drops the batch torn by the full disk, and the producer, retrying all
// along, gets every record acknowledged: all of them are in the log once,
// at the offsets acknowledged. Then the disk fills again under a raw
// producer, whose append is answered KAFKA_STORAGE_ERROR. The disk is a
// 12 MiB tmpfs (64 MiB once grown), which needs root (mount); the test skips loudly where it cannot mount one.
func TestFullDiskHaltsTheBinaryAndNothingIsLost(t *testing.T) {
	disk := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Skipf("*** cannot mount a small tmpfs (%v: %s); it needs root: SKIPPING the full-disk test ***", err, strings.TrimSpace(string(out)))
	}
	// Runs before the TempDir cleanup removes the mount point.
	t.Cleanup(func() { _ = exec.Command("umount", disk).Run() })

	const (
		topic   = "full"
		records = 16_000 // 1 KiB each: more than the disk holds
	)
	n := newNode(t, "log.segment.bytes=4194304")
	n.logDir = filepath.Join(disk, "data")
	p := n.start()
	createTopic(t, newAdmin(t, n.kafkaAddr()), topic, 2)
	led := newLedger(topic)
	led.pad = strings.Repeat("p", 1000)
	prod := newClient(t, n.kafkaAddr(), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(2*time.Minute),
		kgo.ProducerBatchCompression(kgo.NoCompression())) // the padding would compress to nothing
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sent := make(chan struct{})
	go func() { // Produce blocks once the client buffers 10,000 records
		defer close(sent)
		for i := range records {
			led.produce(ctx, prod, i)
		}
	}()

	waitHalted(t, p, 60*time.Second, "storage: ", "no space left on device")
	t.Logf("%d of %d records acknowledged at the halt", led.nacked.Load(), records)

	if out, err := exec.Command("mount", "-o", "remount,size=64m", disk).CombinedOutput(); err != nil {
		t.Fatalf("growing the disk: %v: %s", err, out)
	}
	p = n.start()
	t.Logf("restarted: %s", firstOr(p.linesWith("recovery dropped data"), "no data dropped by recovery"))
	<-sent
	if err := prod.Flush(ctx); err != nil {
		t.Fatalf("flush after the restart: %v", err)
	}
	if errs := led.errors(); len(errs) != 0 {
		t.Fatalf("%d records failed: %s", len(errs), summarizeErrs(errs))
	}
	log, ends := readAll(t, n.kafkaAddr(), topic)
	a, problems := check(led.snapshot(), log, ends)
	t.Logf("full disk: %s", a)
	if a.acked != records || a.lost != 0 || a.duplicates != 0 || a.unacked != 0 || a.gaps != 0 {
		t.Fatalf("audit %s:\n%s", a, strings.Join(problems, "\n"))
	}

	// The disk fills again under a producer with one request at a time,
	// each a 256 KiB batch to both partitions: the request whose appends
	// meet the full disk is answered, KAFKA_STORAGE_ERROR for at least one
	// partition, before the broker halts, as Kafka answers it from the
	// request handler while it halts. (kgo above retries that answer
	// without telling its caller.)
	rc := rawconn.Dial(t, n.kafkaAddr())
	batch := plainBatch(t, strings.Repeat("f", 256<<10))
	for i := 0; ; i++ {
		req := rawconn.Produce(topic, 9, batch)
		p1 := kmsg.NewProduceRequestTopicPartition()
		p1.Partition, p1.Records = 1, batch
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, p1)
		corr := rc.Send(req)
		resp, err := rawconn.ReadResponse(rc.R, req, corr)
		if err != nil {
			t.Fatalf("request %d: %v; want an answer, KAFKA_STORAGE_ERROR once the disk is full", i, err)
		}
		var codes []int16
		for _, p := range resp.(*kmsg.ProduceResponse).Topics[0].Partitions {
			codes = append(codes, p.ErrorCode)
		}
		if !slices.ContainsFunc(codes, func(c int16) bool { return c != 0 }) && i < 1000 {
			continue
		}
		if !slices.Contains(codes, kerr.KafkaStorageError.Code) {
			t.Fatalf("request %d: error codes %v, want KAFKA_STORAGE_ERROR (%d) once the disk is full", i, codes, kerr.KafkaStorageError.Code)
		}
		t.Logf("request %d answered %v", i, codes)
		break
	}
	waitHalted(t, p, 60*time.Second, "storage: ", "no space left on device")
}

// waitHalted fails the test unless p exits within timeout with status 1,
// saying on stderr that it halted on a storage error, with each of
// causes: how a broker halts when its log directory fails.
func waitHalted(t *testing.T, p *proc, timeout time.Duration, causes ...string) {
	t.Helper()
	code, err := p.wait(timeout)
	if err != nil {
		t.Fatalf("the broker did not exit: %v\nstderr:\n%s", err, tail(p.stderr(), 3000))
	}
	want := append([]string{"strait serve: halted: "}, causes...)
	for _, w := range want {
		if code != 1 || !strings.Contains(p.stderr(), w) {
			t.Fatalf("exit status %d, want 1 with %q on stderr:\n%s", code, want, tail(p.stderr(), 3000))
		}
	}
	t.Logf("halted: %s", strings.TrimSpace(p.linesWith("strait serve: halted")[0]))
}
