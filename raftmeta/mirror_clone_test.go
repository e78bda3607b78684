package raftmeta

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestCreateTopicsClone: CreateTopics with mirror.clone.of creates a drill
// clone of a mirror topic (its partitions and replicas, its configs but
// mirror.name, the source's topic id in the stored spec, leaders epochs
// above the source's); a topic of no mirror or of another mirror, a point
// per partition missing, a partition count of its own or a bad value are
// refused; the config APIs cannot change mirror.clone.of, and the broker's
// config validator never sees it.
func TestCreateTopicsClone(t *testing.T) {
	var seen []string
	cfg := Config{ConfigValidator: func(res ConfigResource, configs map[string]*string) error {
		for k := range configs {
			seen = append(seen, k)
		}
		return nil
	}}
	c, log := newMirrorController(t, cfg, 1)
	ctx := context.Background()
	mustCreateMirror(t, c, "east")
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("east", srcTopic("m", 1, 2)))); got != "NONE m=NONE" {
		t.Fatal(got)
	}
	if code := c.IncrementalAlterConfigs(ctx, incReq(false, incRes(topicT, "m", op{"retention.ms", set, s("1000")}))).Resources[0].ErrorCode; code != 0 {
		t.Fatalf("alter m: %s", codeName(code))
	}
	mustCreate(t, c, newTopic("plain", 2, 1))
	src := log.Image().Topics["m"]

	for _, tc := range []struct {
		value string
		np    int32
		code  int16
	}{
		{"east:plain::0=1,1=1", -1, kerr.InvalidRequest.Code}, // not a mirror topic
		{"west:m::0=1,1=1", -1, kerr.InvalidRequest.Code},     // another mirror
		{"east:gone::0=1", -1, kerr.UnknownTopicOrPartition.Code},
		{"east:m::0=1", -1, kerr.InvalidPartitions.Code}, // a point per partition
		{"east:m::0=1,1=1", 3, kerr.InvalidRequest.Code}, // the source's count
		{"east:m::0=1,0=2", -1, kerr.InvalidConfig.Code},
		{"east:m::0=-1,1=1", -1, kerr.InvalidConfig.Code},
		{"east:m:AQAAAAAAAAAAAAAAAAAAAA:0=1,1=1", -1, kerr.InconsistentTopicID.Code},
		{"east:m", -1, kerr.InvalidConfig.Code},
	} {
		rt := newTopic("bad", tc.np, -1, MirrorCloneConfig, tc.value)
		if r := c.CreateTopics(ctx, createReq(7, rt)); r.Topics[0].ErrorCode != tc.code {
			t.Errorf("%q (partitions %d): %s, want %s", tc.value, tc.np, codeName(r.Topics[0].ErrorCode), codeName(tc.code))
		}
	}
	if _, ok := log.Image().Topics["bad"]; ok {
		t.Fatal("a refused clone was created")
	}

	r := c.CreateTopics(ctx, createReq(7, newTopic("m-drill", -1, -1, MirrorCloneConfig, "east:m::0=5,1=7")))
	if code := r.Topics[0].ErrorCode; code != 0 {
		t.Fatalf("clone: %s %v", codeName(code), r.Topics[0].ErrorMessage)
	}
	img := log.Image()
	cl := img.Topics["m-drill"]
	if cl == nil || len(cl.Partitions) != 2 || cl.ID == src.ID {
		t.Fatalf("clone %+v of %+v", cl, src)
	}
	want := fmt.Sprintf("%s=east:m:%s:0=5,1=7 retention.ms=1000", MirrorCloneConfig, src.ID)
	if got := configsOf(img, ConfigResourceTopic, "m-drill"); got != want {
		t.Fatalf("clone configs %s, want %s", got, want)
	}
	for i, p := range cl.Partitions {
		sp := src.Partitions[i]
		if fmt.Sprint(p.Replicas) != fmt.Sprint(sp.Replicas) || p.Leader != sp.Leader || p.LeaderEpoch <= sp.LeaderEpoch {
			t.Errorf("clone partition %d %+v, source %+v: want its replicas and leader, a higher epoch", i, p, sp)
		}
	}
	for _, tc := range []op{{MirrorCloneConfig, set, s("east:m::0=9,1=9")}, {MirrorCloneConfig, del, nil}} {
		if code := c.IncrementalAlterConfigs(ctx, incReq(false, incRes(topicT, "m-drill", tc))).Resources[0].ErrorCode; code != kerr.InvalidConfig.Code {
			t.Errorf("incremental %v: %s", tc, codeName(code))
		}
	}
	for _, k := range seen {
		if k == MirrorCloneConfig || k == MirrorNameConfig {
			t.Fatalf("the validator saw %s", k)
		}
	}
}
