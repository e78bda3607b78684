package raftmeta

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestMirrorsOverTheControllerChannel drives the mirror RPCs through a
// real single-voter quorum's controller channel (ctrlrpc, as a broker
// forwards them), then restores the image from a raft snapshot and from
// the log after it.
func TestMirrorsOverTheControllerChannel(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := Config{NodeID: 1, Dir: dir, ClusterID: "cluster-M", BindAddr: addr, Voters: map[int32]string{1: addr}, TrailingLogs: 2}
	q := openQuorum(t, cfg)
	startQuorum(t, q)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Controller().RegisterBroker(ctx, Broker{ID: 1, Endpoints: []Endpoint{{Listener: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "127.0.0.1", Port: 9092}}}); err != nil {
		t.Fatal(err)
	}
	ch := q.NewClient()
	defer ch.Close()

	resp, err := ch.Send(ctx, createMirrorReq("east", "bootstrap.servers", "src:9092", "mirror.topics.include", "orders"))
	if err != nil {
		t.Fatal(err)
	}
	if cr := resp.(*mirrormsg.CreateMirrorResponse); cr.ErrorCode != 0 {
		t.Fatalf("create: %s %s", mirrorCode(cr.ErrorCode), deref(cr.ErrorMessage))
	}
	resp, err = ch.Send(ctx, createMirrorReq("east", "bootstrap.servers", "src:9092"))
	if err != nil || resp.(*mirrormsg.CreateMirrorResponse).ErrorCode != mirrormsg.ClusterMirrorAlreadyExists.Code {
		t.Fatalf("second create: %v %+v", err, resp)
	}
	resp, err = ch.Send(ctx, startReq("east", srcTopic("orders", 77, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if got := topicResults(resp); got != "NONE orders=NONE" {
		t.Fatalf("start: %s", got)
	}
	// The channel names this node's broker: BrokerId -1 is broker 1, the
	// leader of both partitions.
	resp, err = ch.Send(ctx, bumpReq(-1, -1, testID(77), [3]int32{0, 0, 12}, [3]int32{1, 0, -1}))
	if err != nil {
		t.Fatal(err)
	}
	if got := bumpResults(resp.(*mirrormsg.BumpLeaderEpochsResponse)); got != "NONE orders-0=NONE orders-1=NONE" {
		t.Fatalf("bump: %s", got)
	}
	resp, err = ch.Send(ctx, mirrormsg.NewPtrListMirrorsRequest())
	if err != nil {
		t.Fatal(err)
	}
	if lr := resp.(*mirrormsg.ListMirrorsResponse); len(lr.Mirrors) != 1 || lr.Mirrors[0].SourceBootstrap != "src:9092" || lr.Mirrors[0].TopicCount != 1 {
		t.Fatalf("list: %+v", lr)
	}
	img := q.Image()
	if o := img.Topics["orders"]; o == nil || o.ID != testID(77) || o.Partitions[0].LeaderEpoch != 12 || o.Partitions[1].LeaderEpoch != 1 ||
		img.Mirrors["east"] == nil || img.Topics[MirrorStateTopic] == nil || mirrorNames(img) != "orders=east" {
		t.Fatalf("image:\n%s", formatImage(img))
	}

	// Snapshot, change more, reopen: the snapshot restores the mirror and
	// the log after it the pause.
	if err := q.raft.Load().Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	resp, err = ch.Send(ctx, pauseReq("east", "orders"))
	if err != nil || topicResults(resp) != "NONE orders=NONE" {
		t.Fatalf("pause: %v %s", err, topicResults(resp))
	}
	img = q.Image()
	ch.Close()
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	q = openQuorum(t, cfg)
	startQuorum(t, q)
	if !reflect.DeepEqual(q.Image(), img) {
		t.Fatalf("reopened image differs:\n%s\nwant\n%s", formatImage(q.Image()), formatImage(img))
	}
	if mirrorNames(q.Image()) != "orders=east.paused" || q.Image().MirrorConfig("east")["mirror.topics.include"] != "orders" {
		t.Fatalf("reopened:\n%s", formatImage(q.Image()))
	}
}
