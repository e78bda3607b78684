package wire

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareStandIn is a ShareService answering canned responses and keeping
// what it received.
type shareStandIn struct {
	mu  *sync.Mutex
	got *[]kmsg.Request
}

func newShareStandIn() shareStandIn {
	return shareStandIn{mu: &sync.Mutex{}, got: &[]kmsg.Request{}}
}

func (s shareStandIn) keep(req kmsg.Request) {
	if s.mu == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.got = append(*s.got, req)
}

func (s shareStandIn) received() []kmsg.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]kmsg.Request(nil), *s.got...)
}

// cannedShareFetch answers one partition with records and acquired
// records, and one with none (Records left nil: the handler sends it
// empty).
func cannedShareFetch(version int16) *kmsg.ShareFetchResponse {
	resp := kmsg.NewPtrShareFetchResponse()
	resp.Version = version
	resp.AcquisitionLockTimeoutMillis = 30000
	rt := kmsg.NewShareFetchResponseTopic()
	rt.TopicID = [16]byte{7}
	p0 := kmsg.NewShareFetchResponseTopicPartition()
	p0.Partition, p0.Records = 0, []byte{1, 2, 3}
	ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
	ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = 10, 12, 1
	p0.AcquiredRecords = append(p0.AcquiredRecords, ar)
	p1 := kmsg.NewShareFetchResponseTopicPartition()
	p1.Partition, p1.CurrentLeader.LeaderID, p1.CurrentLeader.LeaderEpoch = 1, -1, -1
	rt.Partitions = append(rt.Partitions, p0, p1)
	resp.Topics = append(resp.Topics, rt)
	return resp
}

func cannedShareAcknowledge(version int16) *kmsg.ShareAcknowledgeResponse {
	resp := kmsg.NewPtrShareAcknowledgeResponse()
	resp.Version = version
	if version >= 2 {
		resp.AcquisitionLockTimeoutMillis = 30000
	}
	rt := kmsg.NewShareAcknowledgeResponseTopic()
	rt.TopicID = [16]byte{7}
	rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
	rp.Partition, rp.ErrorCode = 3, 121 // INVALID_RECORD_STATE
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	return resp
}

func (s shareStandIn) ShareFetch(_ context.Context, req *kmsg.ShareFetchRequest) *kmsg.ShareFetchResponse {
	s.keep(req)
	return cannedShareFetch(req.Version)
}

func (s shareStandIn) ShareAcknowledge(_ context.Context, req *kmsg.ShareAcknowledgeRequest) *kmsg.ShareAcknowledgeResponse {
	s.keep(req)
	return cannedShareAcknowledge(req.Version)
}

func shareFetchRequest(version int16) *kmsg.ShareFetchRequest {
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = version
	req.GroupID, req.MemberID = kmsg.StringPtr("g"), kmsg.StringPtr("m1")
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = 500, 1, 1<<20, 100, 10
	if version >= 2 {
		req.ShareAcquireMode = 1
	}
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = [16]byte{7}
	rp := kmsg.NewShareFetchRequestTopicPartition()
	rp.Partition = 0
	b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = 1, 3, []int8{1}
	rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func shareAcknowledgeRequest(version int16) *kmsg.ShareAcknowledgeRequest {
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.Version = version
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr("g"), kmsg.StringPtr("m1"), 4
	req.IsRenewAck = version >= 2
	rt := kmsg.NewShareAcknowledgeRequestTopic()
	rt.TopicID = [16]byte{7}
	rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
	rp.Partition = 3
	b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = 5, 6, []int8{4, 2}
	rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, b)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// ShareFetch and ShareAcknowledge, v1 and v2, reach the ShareService over
// a socket exactly as sent, and its answers come back, with a partition
// without records sent empty, not null.
func TestShareRequestsReachService(t *testing.T) {
	svc := newShareStandIn()
	s := newTestServerSvc(t, Config{}, Services{Share: svc}, nil)
	c := dialRaw(t, s.plaintextAddr())
	var sent []kmsg.Request
	for v := int16(1); v <= 2; v++ {
		fetch := shareFetchRequest(v)
		c.send(int32(10+v), fetch)
		resp := kmsg.NewPtrShareFetchResponse()
		resp.Version = v
		if corr := c.readResp(resp); corr != int32(10+v) {
			t.Fatalf("ShareFetch v%d: correlation id %d", v, corr)
		}
		want := cannedShareFetch(v)
		want.Topics[0].Partitions[1].Records = []byte{}
		if !reflect.DeepEqual(resp, want) {
			t.Fatalf("ShareFetch v%d answered %+v, want %+v", v, resp, want)
		}

		ack := shareAcknowledgeRequest(v)
		c.send(int32(20+v), ack)
		aresp := kmsg.NewPtrShareAcknowledgeResponse()
		aresp.Version = v
		if corr := c.readResp(aresp); corr != int32(20+v) || !reflect.DeepEqual(aresp, cannedShareAcknowledge(v)) {
			t.Fatalf("ShareAcknowledge v%d: correlation id %d, answered %+v", v, corr, aresp)
		}
		sent = append(sent, fetch, ack)
	}
	if got := svc.received(); !reflect.DeepEqual(got, sent) {
		t.Fatalf("the service received %+v, want %+v", got, sent)
	}
}

// The share keys are served exactly when the server has a ShareService,
// and listed in ApiVersions only when it also says AdvertiseShare; the
// other keys are the same either way.
func TestShareKeysServedAndAdvertised(t *testing.T) {
	for _, tc := range []struct {
		name       string
		svc        Services
		served     bool
		advertised bool
	}{
		{"no service", Services{}, false, false},
		{"no service, advertise asked", Services{AdvertiseShare: true}, false, false},
		{"service", Services{Share: newShareStandIn()}, true, false},
		{"service, advertised", Services{Share: newShareStandIn(), AdvertiseShare: true}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServerSvc(t, Config{}, tc.svc, nil)
			addr := s.plaintextAddr()
			resp := apiVersionsOnConn(t, dialRaw(t, addr))
			want := expectedKeys()
			if tc.advertised {
				want = expectedKeys(api{key: 78, min: 1, max: 2}, api{key: 79, min: 1, max: 2})
			}
			if resp.ErrorCode != 0 || !reflect.DeepEqual(resp.ApiKeys, want) {
				t.Fatalf("ApiVersions: error %d, keys %+v, want %+v", resp.ErrorCode, resp.ApiKeys, want)
			}

			for _, req := range []kmsg.Request{shareFetchRequest(1), shareAcknowledgeRequest(1)} {
				c := dialRaw(t, addr)
				c.send(2, req)
				if !tc.served {
					c.expectClosed(5 * time.Second)
					continue
				}
				resp := req.ResponseKind()
				resp.SetVersion(1)
				if corr := c.readResp(resp); corr != 2 {
					t.Fatalf("%s: correlation id %d", NameForKey(req.Key()), corr)
				}
			}
			// v0 (Kafka 4.0's early access) is an unsupported version:
			// the connection closes, as for any such request.
			v0 := shareFetchRequest(1)
			v0.Version = 0
			c := dialRaw(t, addr)
			c.send(3, v0)
			c.expectClosed(5 * time.Second)
			if ss, ok := tc.svc.Share.(shareStandIn); ok && len(ss.received()) != 2 {
				t.Fatalf("the service received %d requests, want the 2 valid ones", len(ss.received()))
			}
			apiVersionsOK(t, addr)
		})
	}
}
