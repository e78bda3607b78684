package wire

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareCoordinatorRecorder is a ShareCoordinatorService answering every
// request with a marker error code (the request's key) and keeping what
// it got.
type shareCoordinatorRecorder struct {
	mu  sync.Mutex
	got []kmsg.Request
}

func (r *shareCoordinatorRecorder) record(req kmsg.Request) int16 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, req)
	return req.Key()
}

func (r *shareCoordinatorRecorder) InitializeShareGroupState(_ context.Context, req *kmsg.InitializeShareGroupStateRequest) *kmsg.InitializeShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
	resp.Topics = []kmsg.InitializeShareGroupStateResponseTopic{{Partitions: []kmsg.InitializeShareGroupStateResponseTopicPartition{{ErrorCode: r.record(req)}}}}
	return resp
}

func (r *shareCoordinatorRecorder) ReadShareGroupState(_ context.Context, req *kmsg.ReadShareGroupStateRequest) *kmsg.ReadShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
	resp.Topics = []kmsg.ReadShareGroupStateResponseTopic{{Partitions: []kmsg.ReadShareGroupStateResponseTopicPartition{{ErrorCode: r.record(req)}}}}
	return resp
}

func (r *shareCoordinatorRecorder) WriteShareGroupState(_ context.Context, req *kmsg.WriteShareGroupStateRequest) *kmsg.WriteShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
	resp.Topics = []kmsg.WriteShareGroupStateResponseTopic{{Partitions: []kmsg.WriteShareGroupStateResponseTopicPartition{{ErrorCode: r.record(req)}}}}
	return resp
}

func (r *shareCoordinatorRecorder) DeleteShareGroupState(_ context.Context, req *kmsg.DeleteShareGroupStateRequest) *kmsg.DeleteShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
	resp.Topics = []kmsg.DeleteShareGroupStateResponseTopic{{Partitions: []kmsg.DeleteShareGroupStateResponseTopicPartition{{ErrorCode: r.record(req)}}}}
	return resp
}

func (r *shareCoordinatorRecorder) ReadShareGroupStateSummary(_ context.Context, req *kmsg.ReadShareGroupStateSummaryRequest) *kmsg.ReadShareGroupStateSummaryResponse {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
	resp.Topics = []kmsg.ReadShareGroupStateSummaryResponseTopic{{Partitions: []kmsg.ReadShareGroupStateSummaryResponseTopicPartition{{ErrorCode: r.record(req)}}}}
	return resp
}

// shareCoordinatorRequests are one request of each share coordinator key,
// at every version served, with a group id that says which it is.
func shareCoordinatorRequests() []kmsg.Request {
	var out []kmsg.Request
	for key := int16(83); key <= 87; key++ {
		for v := shareCoordinatorRanges[key][0]; v <= shareCoordinatorRanges[key][1]; v++ {
			req := kmsg.RequestForKey(key)
			req.SetVersion(v)
			reflect.ValueOf(req).Elem().FieldByName("GroupID").SetString(NameForKey(key))
			out = append(out, req)
		}
	}
	return out
}

// The share coordinator's keys are advertised, with Kafka 4.2's ranges,
// exactly when the server has a ShareCoordinatorService, and each request
// reaches it over a real connection at every version; without the service
// a request of these keys is refused as an unknown key.
func TestShareCoordinatorKeysServedOnlyWithService(t *testing.T) {
	for _, with := range []bool{false, true} {
		svc, rec := Services{}, &shareCoordinatorRecorder{}
		if with {
			svc.ShareCoordinator = rec
		}
		s := newTestServerSvc(t, Config{}, svc, nil)
		c := dialRaw(t, s.plaintextAddr())
		av := kmsg.NewPtrApiVersionsRequest()
		av.Version = 4
		av.ClientSoftwareName, av.ClientSoftwareVersion = "raw", "1"
		c.send(1, av)
		resp := av.ResponseKind().(*kmsg.ApiVersionsResponse)
		c.readResp(resp)
		got := map[int16][2]int16{}
		for _, k := range resp.ApiKeys {
			if _, ok := shareCoordinatorRanges[k.ApiKey]; ok {
				got[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
			}
		}
		if want := map[bool]map[int16][2]int16{false: {}, true: shareCoordinatorRanges}[with]; !reflect.DeepEqual(got, want) {
			t.Fatalf("service %t: advertised %v, want %v", with, got, want)
		}
		if !with {
			for _, req := range shareCoordinatorRequests()[:1] {
				c.send(2, req)
				c.expectClosed(5 * time.Second)
			}
			continue
		}
		for i, req := range shareCoordinatorRequests() {
			c.send(int32(10+i), req)
			r := req.ResponseKind()
			r.SetVersion(req.GetVersion())
			if corr := c.readResp(r); corr != int32(10+i) {
				t.Fatalf("%s: correlation id %d", NameForKey(req.Key()), corr)
			}
			code := reflect.ValueOf(r).Elem().FieldByName("Topics").Index(0).FieldByName("Partitions").Index(0).FieldByName("ErrorCode").Int()
			if code != int64(req.Key()) {
				t.Fatalf("%s v%d: answered %d, not by the service", NameForKey(req.Key()), req.GetVersion(), code)
			}
		}
		rec.mu.Lock()
		for i, req := range shareCoordinatorRequests() {
			got := rec.got[i]
			if got.Key() != req.Key() || got.GetVersion() != req.GetVersion() ||
				reflect.ValueOf(got).Elem().FieldByName("GroupID").String() != NameForKey(req.Key()) {
				t.Errorf("request %d reached the service as %s v%d", i, NameForKey(got.Key()), got.GetVersion())
			}
		}
		rec.mu.Unlock()
	}
	var r request
	r.hdr = requestHeader{key: 85}
	if r.resolve(newAPITable(Services{})); !errors.Is(r.err, ErrUnknownAPIKey) {
		t.Fatalf("WriteShareGroupState without the service resolves to %v, want %v", r.err, ErrUnknownAPIKey)
	}
}
