package ctrlrpc

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestMirrorRequestsOverTheChannel: the KIP-1279 mirror RPCs cross the
// channel as mirrormsg types, with their tagged fields, and their answers
// come back decoded.
func TestMirrorRequestsOverTheChannel(t *testing.T) {
	var mu sync.Mutex
	var got []kmsg.Request
	var clientIDs []string
	n := newNode(t, HandlerFunc(func(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
		mu.Lock()
		got = append(got, req)
		ri, _ := InfoFrom(ctx)
		clientIDs = append(clientIDs, ri.ClientID)
		mu.Unlock()
		switch req := req.(type) {
		case *mirrormsg.CreateMirrorRequest:
			resp := req.ResponseKind().(*mirrormsg.CreateMirrorResponse)
			resp.ErrorCode = mirrormsg.ClusterMirrorAlreadyExists.Code
			resp.ErrorMessage = kmsg.StringPtr("Cluster mirror '" + req.MirrorName + "' already exists.")
			return resp, nil
		case *mirrormsg.StartMirrorTopicsRequest:
			resp := req.ResponseKind().(*mirrormsg.StartMirrorTopicsResponse)
			resp.MirrorName = req.MirrorName
			for _, st := range req.Topics {
				tr := mirrormsg.NewStartMirrorTopicsResponseTopicResult()
				tr.Name, tr.ErrorCode = st.Name, int16(st.NumPartitions)
				resp.Topics = append(resp.Topics, tr)
			}
			return resp, nil
		}
		return nil, errors.New("unexpected request")
	}))
	c := NewClient(ClientConfig{ClientID: NodeClientID(3), Bootstrap: []string{n.addr}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	create := mirrormsg.NewPtrCreateMirrorRequest()
	create.MirrorName = "east"
	create.Config = []mirrormsg.CreateMirrorRequestMirrorConfig{{Name: "bootstrap.servers", Value: kmsg.StringPtr("src:9092")}}
	resp, err := c.Send(ctx, create)
	if err != nil {
		t.Fatal(err)
	}
	cr, ok := resp.(*mirrormsg.CreateMirrorResponse)
	if !ok || cr.ErrorCode != 136 || *cr.ErrorMessage != "Cluster mirror 'east' already exists." {
		t.Fatalf("create answered %#v", resp)
	}

	start := mirrormsg.NewPtrStartMirrorTopicsRequest()
	start.MirrorName = "east"
	start.Topics = []mirrormsg.StartMirrorTopicsRequestSourceTopic{{Name: "orders", TopicID: [16]byte{7}, NumPartitions: 3}}
	resp, err = c.Send(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	if sr := resp.(*mirrormsg.StartMirrorTopicsResponse); sr.MirrorName != "east" || len(sr.Topics) != 1 || sr.Topics[0].Name != "orders" || sr.Topics[0].ErrorCode != 3 {
		t.Fatalf("start answered %#v", sr)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("served %d requests", len(got))
	}
	if g, ok := got[0].(*mirrormsg.CreateMirrorRequest); !ok || g.MirrorName != "east" || len(g.Config) != 1 || *g.Config[0].Value != "src:9092" {
		t.Fatalf("server decoded %#v", got[0])
	}
	if g := got[1].(*mirrormsg.StartMirrorTopicsRequest); len(g.Topics) != 1 || g.Topics[0].TopicID != [16]byte{7} {
		t.Fatalf("server decoded %#v", g)
	}
	if clientIDs[0] != NodeClientID(3) {
		t.Fatalf("client id %q", clientIDs[0])
	}
}

func TestRequestForKeyPrefersMirror(t *testing.T) {
	for key, want := range map[int16]string{9400: "CreateMirror", 9409: "DeleteMirror", 9411: "BumpLeaderEpochs", 63: "BrokerHeartbeat", 94: "UnregisterController"} {
		req := requestForKey(key)
		if req == nil || apiName(key) != want {
			t.Fatalf("key %d: %T %s", key, req, apiName(key))
		}
	}
	if _, ok := requestForKey(mirrormsg.KeyCreateMirror).(*mirrormsg.CreateMirrorRequest); !ok {
		t.Fatal("CreateMirror's key is not CreateMirror")
	}
	// 94, CreateMirror's until issue 32, is upstream's UnregisterController.
	if _, ok := requestForKey(94).(*kmsg.UnregisterControllerRequest); !ok {
		t.Fatalf("key 94 is %T, not kmsg's UnregisterController", requestForKey(94))
	}
	if requestForKey(10000) != nil {
		t.Fatal("a request for an unknown key")
	}
}

// TestSyncScramCredentialsOverTheChannel: the internal SyncScramCredentials
// (a mirror's synced SCRAM keys) reaches the controller with its bytes
// fields intact, and its answer comes back.
func TestSyncScramCredentialsOverTheChannel(t *testing.T) {
	sent := mirrormsg.NewPtrSyncScramCredentialsRequest()
	sent.MirrorName = "east"
	sent.Upsertions = []mirrormsg.SyncScramCredentialsRequestUpsertion{{
		Name: "alice", Mechanism: 2, Salt: []byte{1, 2, 3}, StoredKey: make([]byte, 64), ServerKey: []byte{9}, Iterations: 4096,
	}}
	sent.Deletions = []mirrormsg.SyncScramCredentialsRequestDeletion{{Name: "bob", Mechanism: 1}}
	received := make(chan kmsg.Request, 1)
	n := newNode(t, HandlerFunc(func(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
		received <- req
		resp := req.ResponseKind().(*mirrormsg.SyncScramCredentialsResponse)
		resp.ErrorCode, resp.ErrorMessage = 31, kmsg.StringPtr("no sync")
		return resp, nil
	}))
	c := NewClient(ClientConfig{ClientID: NodeClientID(3), Bootstrap: []string{n.addr}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Send(ctx, sent)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := resp.(*mirrormsg.SyncScramCredentialsResponse); !ok || r.ErrorCode != 31 || *r.ErrorMessage != "no sync" {
		t.Fatalf("response %T %v", resp, resp)
	}
	got := (<-received).(*mirrormsg.SyncScramCredentialsRequest)
	if !reflect.DeepEqual(got, sent) {
		t.Fatalf("the controller received %v, want %v", got, sent)
	}
}
