package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/vfs"
)

// TestCheckpointIntervals: the log directory's checkpoint files follow
// their own configs, as Kafka's tasks do. With
// replica.high.watermark.checkpoint.interval.ms and
// log.flush.offset.checkpoint.interval.ms short and
// log.flush.start.offset.checkpoint.interval.ms 0 (only at shutdown), the
// high watermark and recovery point files come to list the topic while the
// broker runs and the log start offset file does not; a clean stop writes
// it, with the log start DeleteRecords moved.
func TestCheckpointIntervals(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig(
		"replica.high.watermark.checkpoint.interval.ms=50",
		"log.flush.offset.checkpoint.interval.ms=50",
		"log.flush.start.offset.checkpoint.interval.ms=0",
		// A flush after every message moves the recovery point.
		"log.flush.interval.messages=1",
	))
	ctx := testCtx(t, time.Minute)
	adm := b.Admin(t)
	const topic = "checkpointed"
	createTopic(t, adm, topic, 1)
	cl := b.Client(t, kgo.DefaultProduceTopic(topic))
	for i := 0; i < 3; i++ {
		if err := cl.ProduceSync(ctx, kgo.StringRecord("v")).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: topic, Partition: 0, At: 2})
	if res, err := adm.DeleteRecords(ctx, del); err != nil || res.Error() != nil {
		t.Fatalf("delete records: %v %v", err, res.Error())
	}

	tp := storage.TopicPartition{Topic: topic, Partition: 0}
	listed := func(file string) (int64, bool) {
		offsets, err := storage.ReadOffsetCheckpoint(vfs.OS{}, b.Dir(), file)
		if err != nil {
			t.Fatalf("reading %s: %v", file, err)
		}
		off, ok := offsets[tp]
		return off, ok
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		hw, hwOK := listed(storage.ReplicationCheckpointFile)
		rp, rpOK := listed(storage.RecoveryPointCheckpointFile)
		if hwOK && rpOK && hw == 3 && rp == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("high watermark checkpoint %d (%v), recovery point %d (%v); want both 3", hw, hwOK, rp, rpOK)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if off, ok := listed(storage.LogStartOffsetCheckpointFile); ok {
		t.Fatalf("log start offset checkpointed (%d) with log.flush.start.offset.checkpoint.interval.ms=0", off)
	}
	cl.Close()
	b.Stop(t)
	if off, ok := listed(storage.LogStartOffsetCheckpointFile); !ok || off != 2 {
		t.Fatalf("after a clean stop the log start offset checkpoint has %d (%v), want 2", off, ok)
	}
}
