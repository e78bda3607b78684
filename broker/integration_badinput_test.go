package broker_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage/record"
)

// rawConn is a bare TCP connection to the broker speaking the Kafka
// framing by hand.
type rawConn struct {
	t    testing.TB
	c    net.Conn
	r    *bufio.Reader
	corr int32
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, r: bufio.NewReader(c)}
}

func (rc *rawConn) write(b []byte) {
	rc.t.Helper()
	rc.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := rc.c.Write(b); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

// expectClosed waits for the broker to close the connection without
// answering.
func (rc *rawConn) expectClosed(what string) {
	rc.t.Helper()
	rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, rc.r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		rc.t.Fatalf("%s: the broker kept the connection open", what)
	}
	if n != 0 {
		rc.t.Fatalf("%s: the broker answered %d bytes before closing", what, n)
	}
}

// request sends req at version v and reads the matching response.
func (rc *rawConn) request(req kmsg.Request, v int16) kmsg.Response {
	rc.t.Helper()
	req.SetVersion(v)
	rc.corr++
	rc.write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, rc.corr))
	rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(rc.r, size[:]); err != nil {
		rc.t.Fatalf("reading the response to %s v%d: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(rc.r, body); err != nil {
		rc.t.Fatal(err)
	}
	if corr := int32(binary.BigEndian.Uint32(body)); corr != rc.corr {
		rc.t.Fatalf("correlation id %d, want %d", corr, rc.corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	resp.SetVersion(v)
	if resp.IsFlexible() && req.Key() != 18 { // ApiVersions answers with header v0
		body = skipTags(rc.t, body)
	}
	if err := resp.ReadFrom(body); err != nil {
		rc.t.Fatalf("decoding %s v%d response: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	return resp
}

// skipTags skips a response header's tagged fields.
func skipTags(t testing.TB, b []byte) []byte {
	n, l := binary.Uvarint(b)
	if l <= 0 {
		t.Fatal("bad tagged fields")
	}
	b = b[l:]
	for i := uint64(0); i < n; i++ {
		_, l = binary.Uvarint(b)
		b = b[l:]
		size, l2 := binary.Uvarint(b)
		b = b[l2+int(size):]
	}
	return b
}

func frame(body []byte) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(len(body)))
}

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
		rc := dialRaw(t, b.Addr())
		rc.write([]byte("GET / HTTP/1.1\r\nHost: strait\r\n\r\n"))
		rc.expectClosed("an HTTP request")
		stillServed("garbage")
	})
	t.Run("2 GiB length prefix", func(t *testing.T) {
		rc := dialRaw(t, b.Addr())
		rc.write([]byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0})
		rc.expectClosed("a 2 GiB frame")
		stillServed("a 2 GiB frame")
	})
	t.Run("negative length prefix", func(t *testing.T) {
		rc := dialRaw(t, b.Addr())
		rc.write([]byte{0xff, 0xff, 0xff, 0xf0, 1, 2, 3})
		rc.expectClosed("a negative frame length")
		stillServed("a negative frame length")
	})
	t.Run("truncated frame", func(t *testing.T) {
		rc := dialRaw(t, b.Addr())
		// A frame announcing 100 bytes of an ApiVersions request, cut
		// after 20, then the client half-closes.
		body := kmsg.NewRequestFormatter().AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 1)[4:]
		rc.write(append(binary.BigEndian.AppendUint32(nil, 100), body[:min(20, len(body))]...))
		rc.c.(*net.TCPConn).CloseWrite()
		rc.expectClosed("a truncated frame")
		stillServed("a truncated frame")
	})
	t.Run("frame too short for a header", func(t *testing.T) {
		rc := dialRaw(t, b.Addr())
		rc.write([]byte{0, 0, 0, 3, 0, 0, 0})
		rc.expectClosed("a 3-byte frame")
		stillServed("a 3-byte frame")
	})
	t.Run("garbage request body", func(t *testing.T) {
		rc := dialRaw(t, b.Addr())
		// A valid Metadata v12 header followed by bytes that do not
		// decode as its body.
		md := kmsg.NewPtrMetadataRequest()
		md.SetVersion(12)
		hdr := kmsg.NewRequestFormatter().AppendRequest(nil, md, 1)
		hdr = hdr[:4+2+2+4+2+1] // length, key, version, correlation id, null client id, no tags
		body := append(hdr[4:], 0xff, 0xff, 0xff, 0xff, 0xff)
		rc.write(append(frame(body), body...))
		rc.expectClosed("an undecodable Metadata body")
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
		rc := dialRaw(t, b.Addr())
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := rc.request(req, 9).(*kmsg.ProduceResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.CorruptMessage.Code {
			t.Fatalf("corrupt batch: %v, want CORRUPT_MESSAGE", kerr.ErrorForCode(code))
		}
		// The connection stays usable after a partition-level error.
		rt.Topic = "no-such-topic"
		req.Topics = []kmsg.ProduceRequestTopic{rt}
		resp = rc.request(req, 9).(*kmsg.ProduceResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("produce to an unknown topic with auto-create off: %v, want UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(code))
		}
		stillServed("a corrupt batch")
	})

	t.Run("invalid topic names", func(t *testing.T) {
		rc := dialRaw(t, b.Addr())
		ct := kmsg.NewPtrCreateTopicsRequest()
		ct.TimeoutMillis = 5000
		for _, name := range []string{"bad name!", "..", ""} {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
			ct.Topics = append(ct.Topics, rt)
		}
		cresp := rc.request(ct, 7).(*kmsg.CreateTopicsResponse)
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
			mresp := rc.request(md, 12).(*kmsg.MetadataResponse)
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
		rc := dialRaw(t, b.Addr())
		for _, v := range []int16{12, 13} { // by name, by topic id
			req := kmsg.NewPtrFetchRequest()
			req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = -1, 100, 1<<20, -1
			ft := kmsg.NewFetchRequestTopic()
			ft.Topic, ft.TopicID = topic, td[topic].ID
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch, fp.LogStartOffset = -5, 1<<20, -1, -1
			ft.Partitions = append(ft.Partitions, fp)
			req.Topics = append(req.Topics, ft)
			resp := rc.request(req, v).(*kmsg.FetchResponse)
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
