package broker_test

import (
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/wire/rawconn"
)

// TestBadInput sends malformed frames and invalid requests to a running
// broker: each gets Kafka's error or a closed connection, a well-behaved
// client keeps being served throughout, and the records acknowledged
// before are all still readable afterwards with nothing added.
func TestBadInput(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig("auto.create.topics.enable=false"))
	adm := b.Admin(t)
	ctx := testCtx(t, 60*time.Second)
	const topic = "safe"
	createTopic(t, adm, topic, 1)
	good := b.Client(t, kgo.DefaultProduceTopic(topic))
	for i := 0; i < 10; i++ {
		produceSync(t, good, kgo.StringRecord(fmt.Sprint(i)))
	}
	served := 0
	stillServed := func(what string) {
		t.Helper()
		if err := good.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("after %s", what))).FirstErr(); err != nil {
			t.Fatalf("after %s the good client is not served: %v", what, err)
		}
		served++
	}

	t.Run("garbage bytes", func(t *testing.T) {
		rc := rawconn.Dial(t, b.Addr())
		rc.MustWrite([]byte("GET / HTTP/1.1\r\nHost: strait\r\n\r\n"))
		rc.ExpectClosed("an HTTP request", 10*time.Second)
		stillServed("garbage")
	})
	t.Run("2 GiB length prefix", func(t *testing.T) {
		rc := rawconn.Dial(t, b.Addr())
		rc.MustWrite([]byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0})
		rc.ExpectClosed("a 2 GiB frame", 10*time.Second)
		stillServed("a 2 GiB frame")
	})
	t.Run("negative length prefix", func(t *testing.T) {
		rc := rawconn.Dial(t, b.Addr())
		rc.MustWrite([]byte{0xff, 0xff, 0xff, 0xf0, 1, 2, 3})
		rc.ExpectClosed("a negative frame length", 10*time.Second)
		stillServed("a negative frame length")
	})
	t.Run("truncated frame", func(t *testing.T) {
		rc := rawconn.Dial(t, b.Addr())
		// A frame announcing 100 bytes of an ApiVersions request, cut
		// after 20, then the client half-closes.
		body := kmsg.NewRequestFormatter().AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 1)[4:]
		rc.MustWrite(append(binary.BigEndian.AppendUint32(nil, 100), body[:min(20, len(body))]...))
		rc.C.(*net.TCPConn).CloseWrite()
		rc.ExpectClosed("a truncated frame", 10*time.Second)
		stillServed("a truncated frame")
	})
	t.Run("frame too short for a header", func(t *testing.T) {
		rc := rawconn.Dial(t, b.Addr())
		rc.MustWrite([]byte{0, 0, 0, 3, 0, 0, 0})
		rc.ExpectClosed("a 3-byte frame", 10*time.Second)
		stillServed("a 3-byte frame")
	})
	t.Run("garbage request body", func(t *testing.T) {
		rc := rawconn.Dial(t, b.Addr())
		// A valid Metadata v12 header followed by bytes that do not
		// decode as its body.
		md := kmsg.NewPtrMetadataRequest()
		md.SetVersion(12)
		hdr := kmsg.NewRequestFormatter().AppendRequest(nil, md, 1)
		hdr = hdr[:4+2+2+4+2+1] // length, key, version, correlation id, null client id, no tags
		body := append(hdr[4:], 0xff, 0xff, 0xff, 0xff, 0xff)
		rc.MustWrite(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
		rc.ExpectClosed("an undecodable Metadata body", 10*time.Second)
		stillServed("an undecodable body")
	})

	t.Run("corrupt batch", func(t *testing.T) {
		batch, err := record.Build(record.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1,
			BaseTimestamp: time.Now().UnixMilli()},
			[]record.Record{{KeyLen: -1, ValueLen: 3, Value: []byte("bad")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		batch[len(batch)-2] ^= 0xff // a value byte: the CRC no longer matches
		rc := rawconn.Dial(t, b.Addr())
		req := rawconn.Produce(topic, 9, batch)
		resp := rc.RoundTrip(req).(*kmsg.ProduceResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.CorruptMessage.Code {
			t.Fatalf("corrupt batch: %v, want CORRUPT_MESSAGE", kerr.ErrorForCode(code))
		}
		// The connection stays usable after a partition-level error.
		req.Topics[0].Topic = "no-such-topic"
		resp = rc.RoundTrip(req).(*kmsg.ProduceResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("produce to an unknown topic with auto-create off: %v, want UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(code))
		}
		stillServed("a corrupt batch")
	})

	t.Run("invalid topic names", func(t *testing.T) {
		rc := rawconn.Dial(t, b.Addr())
		ct := kmsg.NewPtrCreateTopicsRequest()
		ct.TimeoutMillis = 5000
		for _, name := range []string{"bad name!", "..", ""} {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
			ct.Topics = append(ct.Topics, rt)
		}
		cresp := rc.RoundTrip(withVersion(ct, 7)).(*kmsg.CreateTopicsResponse)
		if len(cresp.Topics) != 3 {
			t.Fatalf("CreateTopics answered %d topics, want 3", len(cresp.Topics))
		}
		for _, rt := range cresp.Topics {
			if rt.ErrorCode != kerr.InvalidTopicException.Code {
				t.Fatalf("CreateTopics %q: %v, want INVALID_TOPIC_EXCEPTION", rt.Topic, kerr.ErrorForCode(rt.ErrorCode))
			}
		}
		for _, auto := range []bool{false, true} {
			md := kmsg.NewPtrMetadataRequest()
			md.AllowAutoTopicCreation = auto
			for _, name := range []string{"bad name!", "missing"} {
				mt := kmsg.NewMetadataRequestTopic()
				mt.Topic = kmsg.StringPtr(name)
				md.Topics = append(md.Topics, mt)
			}
			mresp := rc.RoundTrip(withVersion(md, 12)).(*kmsg.MetadataResponse)
			got := map[string]int16{}
			for _, mt := range mresp.Topics {
				got[*mt.Topic] = mt.ErrorCode
			}
			if got["bad name!"] != kerr.InvalidTopicException.Code || got["missing"] != kerr.UnknownTopicOrPartition.Code {
				t.Fatalf("Metadata (allow auto create %v): bad name %v, missing %v; want INVALID_TOPIC_EXCEPTION, UNKNOWN_TOPIC_OR_PARTITION",
					auto, kerr.ErrorForCode(got["bad name!"]), kerr.ErrorForCode(got["missing"]))
			}
		}
		stillServed("invalid topic names")
	})

	t.Run("fetch at a negative offset", func(t *testing.T) {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		rc := rawconn.Dial(t, b.Addr())
		for _, v := range []int16{12, 13} { // by name, by topic id
			req := kmsg.NewPtrFetchRequest()
			req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = -1, 100, 1<<20, -1
			ft := kmsg.NewFetchRequestTopic()
			ft.Topic, ft.TopicID = topic, td[topic].ID
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch, fp.LogStartOffset = -5, 1<<20, -1, -1
			ft.Partitions = append(ft.Partitions, fp)
			req.Topics = append(req.Topics, ft)
			resp := rc.RoundTrip(withVersion(req, v)).(*kmsg.FetchResponse)
			if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				t.Fatalf("fetch v%d: %+v", v, resp)
			}
			if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.OffsetOutOfRange.Code {
				t.Fatalf("fetch v%d at -5: %v, want OFFSET_OUT_OF_RANGE", v, kerr.ErrorForCode(code))
			}
		}
		stillServed("a negative fetch offset")
	})

	// Nothing was lost and nothing but the good client's records added.
	got := consumeN(t, b, 10+served, []string{topic})
	for i := 0; i < 10; i++ {
		if string(got[i].Value) != fmt.Sprint(i) || got[i].Offset != int64(i) {
			t.Fatalf("record %d: offset %d value %q", i, got[i].Offset, got[i].Value)
		}
	}
	end, err := adm.ListEndOffsets(ctx, topic)
	if o, _ := end.Lookup(topic, 0); err != nil || o.Offset != int64(10+served) {
		t.Fatalf("%s ends at %d, want %d: something was appended that should not have been", topic, o.Offset, 10+served)
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil || len(topics) != 1 {
		t.Fatalf("topics %v (%v): a bad request created one", topics.Names(), err)
	}
}

// withVersion sets req's version for a raw round trip.
func withVersion(req kmsg.Request, v int16) kmsg.Request {
	req.SetVersion(v)
	return req
}
