package broker_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestDeleteRecordsAndListOffsets moves the log start offset with
// DeleteRecords and checks every kind of ListOffsets answer around it:
// earliest, latest, max timestamp and by timestamp.
func TestDeleteRecordsAndListOffsets(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	cl := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := testCtx(t, 30*time.Second)
	const topic, n = "dr", 100
	createTopic(t, adm, topic, 2)
	base := time.UnixMilli(1_700_000_000_000)
	var rs []*kgo.Record
	for i := 0; i < n; i++ {
		ts := base.Add(time.Duration(i) * time.Second)
		if i == 50 {
			ts = base.Add(time.Hour) // the largest timestamp, mid-log
		}
		rs = append(rs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i)), Timestamp: ts})
	}
	// Several batches, so offsets inside the log are found by index.
	for i := 0; i < n; i += 10 {
		produceSync(t, cl, rs[i:i+10]...)
	}

	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: topic, Partition: 0, At: 40})
	dr, err := adm.DeleteRecords(ctx, os)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := dr.Lookup(topic, 0); r.Err != nil || r.LowWatermark != 40 {
		t.Fatalf("DeleteRecords before 40: low watermark %d (%v), want 40", r.LowWatermark, r.Err)
	}
	// Beyond the high watermark: OFFSET_OUT_OF_RANGE, nothing moves.
	os = kadm.Offsets{}
	os.Add(kadm.Offset{Topic: topic, Partition: 0, At: n + 1})
	dr, err = adm.DeleteRecords(ctx, os)
	if r, _ := dr.Lookup(topic, 0); err != nil || !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Fatalf("DeleteRecords before %d: %v %v, want OFFSET_OUT_OF_RANGE", n+1, err, r.Err)
	}
	// An unknown partition, sent straight to the broker (kgo would answer
	// it from its metadata).
	drReq := kmsg.NewPtrDeleteRecordsRequest()
	drReq.TimeoutMillis = 5000
	drt := kmsg.NewDeleteRecordsRequestTopic()
	drt.Topic = topic
	drp := kmsg.NewDeleteRecordsRequestTopicPartition()
	drp.Partition, drp.Offset = 7, 1
	drt.Partitions = append(drt.Partitions, drp)
	drReq.Topics = append(drReq.Topics, drt)
	kr, err := cl.Broker(1).Request(ctx, drReq) // unsharded: the broker's own answer
	drResp, _ := kr.(*kmsg.DeleteRecordsResponse)
	if err != nil || len(drResp.Topics) != 1 || len(drResp.Topics[0].Partitions) != 1 ||
		drResp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("DeleteRecords on partition 7: %v %+v, want UNKNOWN_TOPIC_OR_PARTITION", err, drResp)
	}

	list := func(ts int64) (offset, timestamp int64) {
		t.Helper()
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, ts, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			t.Fatalf("ListOffsets %d: %v", ts, kerr.ErrorForCode(p.ErrorCode))
		}
		return p.Offset, p.Timestamp
	}
	for _, tc := range []struct {
		name         string
		ts           int64
		offset, time int64
	}{
		{"earliest", -2, 40, -1},
		{"latest", -1, n, -1},
		{"max timestamp", -3, 50, base.Add(time.Hour).UnixMilli()},
		{"by timestamp of 45", base.Add(45 * time.Second).UnixMilli(), 45, base.Add(45 * time.Second).UnixMilli()},
		{"by timestamp between 45 and 46", base.Add(45*time.Second).UnixMilli() + 1, 46, base.Add(46 * time.Second).UnixMilli()},
		// The first offset whose timestamp is at or after the target:
		// record 50's hour-late timestamp comes before record 60.
		{"by timestamp of 60", base.Add(60 * time.Second).UnixMilli(), 50, base.Add(time.Hour).UnixMilli()},
		// Timestamps of deleted records: the first record still there.
		{"by timestamp before the start", base.UnixMilli(), 40, base.Add(40 * time.Second).UnixMilli()},
		{"by timestamp after everything", base.Add(2 * time.Hour).UnixMilli(), -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off, ts := list(tc.ts)
			if off != tc.offset || ts != tc.time {
				t.Fatalf("ListOffsets(%d) = offset %d timestamp %d, want %d %d", tc.ts, off, ts, tc.offset, tc.time)
			}
		})
	}

	// A consumer from the start begins at the new log start offset.
	got := consumeN(t, b, n-40, []string{topic})
	if got[0].Offset != 40 || string(got[0].Value) != "40" || len(got) != n-40 {
		t.Fatalf("consumed from the start: first offset %d value %q, %d records; want 40, 60 records", got[0].Offset, got[0].Value, len(got))
	}
	// A fetch below the log start offset is out of range.
	fcl := b.Client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(10)}}),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()))
	fs := fcl.PollFetches(ctx)
	var fetchErr error
	fs.EachError(func(_ string, _ int32, err error) { fetchErr = err })
	if !errors.Is(fetchErr, kerr.OffsetOutOfRange) {
		t.Fatalf("fetch at 10 below the start 40: %v, want OFFSET_OUT_OF_RANGE", fetchErr)
	}

	// DeleteRecords to the high watermark (-1) empties the partition.
	os = kadm.Offsets{}
	os.Add(kadm.Offset{Topic: topic, Partition: 0, At: -1})
	dr, err = adm.DeleteRecords(ctx, os)
	if r, _ := dr.Lookup(topic, 0); err != nil || r.Err != nil || r.LowWatermark != n {
		t.Fatalf("DeleteRecords to the high watermark: %d (%v %v), want %d", r.LowWatermark, err, r.Err, n)
	}
	// As in Kafka (UnifiedLog.fetchOffsetByTimestamp), MAX_TIMESTAMP looks
	// at the segments, not the log start offset: the segment holding
	// record 50 is still there.
	if off, _ := list(-3); off != 50 {
		t.Fatalf("max timestamp offset after deleting every record: %d, want 50 as Kafka answers", off)
	}
	if off, _ := list(-2); off != n {
		t.Fatalf("earliest offset after deleting every record: %d, want %d", off, n)
	}
}

// TestDescribeLogDirs lists the broker's log directory with every
// partition and the bytes each holds.
func TestDescribeLogDirs(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 20*time.Second)
	createTopic(t, adm, "ld", 3)
	cl := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	produceSync(t, cl, &kgo.Record{Topic: "ld", Partition: 1, Value: make([]byte, 1000)})

	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var found []kadm.DescribedLogDir
	dirs.Each(func(d kadm.DescribedLogDir) { found = append(found, d) })
	if len(found) != 1 || found[0].Dir != b.Dir() || found[0].Err != nil || found[0].Broker != 1 {
		t.Fatalf("log dirs %+v, want one: %s on broker 1", found, b.Dir())
	}
	d := found[0]
	if d.TotalBytes <= 0 || d.UsableBytes <= 0 || d.UsableBytes > d.TotalBytes {
		t.Fatalf("volume total %d usable %d", d.TotalBytes, d.UsableBytes)
	}
	for p := int32(0); p < 3; p++ {
		dp, ok := d.Topics.Lookup("ld", p)
		if !ok {
			t.Fatalf("%s not described", tp("ld", p))
		}
		if p == 1 {
			// One batch: 61 bytes of header, a 1000-byte value and the
			// record's own framing.
			if dp.Size < 1061 || dp.Size > 1100 {
				t.Fatalf("%s size %d, want one batch of a 1000-byte value", tp("ld", p), dp.Size)
			}
		} else if dp.Size != 0 {
			t.Fatalf("%s size %d, want 0", tp("ld", p), dp.Size)
		}
		if dp.OffsetLag != 0 || dp.IsFuture {
			t.Fatalf("%s lag %d future %v", tp("ld", p), dp.OffsetLag, dp.IsFuture)
		}
	}
}
