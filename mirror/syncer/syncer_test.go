package syncer

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest/faultnet"
	"github.com/strait-io/strait/raftmeta"
)

// mirrorImage is an image with mirror m1 (configs cfgs) mirroring topic
// orders and pausing topic paused.
func mirrorImage(cfgs map[string]string) *raftmeta.Image {
	img := raftmeta.EmptyImage()
	img.Mirrors["m1"] = &raftmeta.Mirror{Name: "m1"}
	img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceMirror, Name: "m1"}] = cfgs
	for name, mn := range map[string]string{"orders": "m1", "paused": "m1.paused"} {
		img.Topics[name] = &raftmeta.Topic{Name: name, Partitions: []*raftmeta.Partition{{Topic: name}}}
		img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceTopic, Name: name}] = map[string]string{raftmeta.MirrorNameConfig: mn}
	}
	return img
}

// TestStepsFailIndependently: with neither cluster reachable every step
// fails once per round and counts its own error kind; one failing step
// does not keep the others from running.
func TestStepsFailIndependently(t *testing.T) {
	opts := []kgo.Opt{kgo.RetryTimeout(50 * time.Millisecond), kgo.RequestRetries(0)}
	src, err := kgo.NewClient(append(opts, kgo.SeedBrokers(faultnet.RefusedAddr(t)))...)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := kgo.NewClient(append(opts, kgo.SeedBrokers(faultnet.RefusedAddr(t)))...)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	img := mirrorImage(map[string]string{"bootstrap.servers": "x:1", "mirror.topics.include": "o.*"})
	s, err := New(Config{Mirror: "m1", Source: src, Destination: dst, Image: func() *raftmeta.Image { return img }, StepTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s.SyncOnce(context.Background())
	s.SyncOnce(context.Background())
	// Topic metadata: discovery and the refresh fail (2 a round).
	want := Stats{Rounds: 2, TopicMetadataRefreshErrors: 4, TopicConfigSyncErrors: 2, ConsumerGroupOffsetSyncErrors: 2, ShareGroupOffsetSyncErrors: 2, AclSyncErrors: 2}
	if got := s.Stats(); got != want {
		t.Fatalf("stats %+v\nwant  %+v", got, want)
	}
	// A deleted mirror: no round.
	delete(img.Mirrors, "m1")
	s.SyncOnce(context.Background())
	if got := s.Stats().Rounds; got != 2 {
		t.Fatalf("rounds %d after the mirror was deleted, want 2", got)
	}
	if got := (Stats{Rounds: 1, AclsCreated: 2}).Add(want); got.Rounds != 3 || got.AclsCreated != 2 || got.TopicMetadataRefreshErrors != 4 {
		t.Fatalf("Add: %+v", got)
	}
}

// TestMirrorViewSkipsPausedTopics: only topics asked to mirror are
// written to.
func TestMirrorViewSkipsPausedTopics(t *testing.T) {
	img := mirrorImage(map[string]string{"bootstrap.servers": "x:1"})
	var seen []string
	s := &Syncer{cfg: Config{Mirror: "m1", Image: func() *raftmeta.Image { return img }, StepTimeout: time.Second}}
	v := s.view(img)
	for name := range v.active {
		seen = append(seen, name)
	}
	if len(seen) != 1 || seen[0] != "orders" {
		t.Fatalf("active topics %v, want only orders (paused is paused)", seen)
	}
}
