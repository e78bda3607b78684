package mirrorit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// oneHourSync makes the periodic sync run once, when the syncer starts:
// only the barrier's sync can carry what the groups commit later.
const oneHourSync = "mirror.metadata.refresh.interval.ms=3600000"

// commitOn commits offs (partition → offset) of topic for group on s.
func commitOn(t *testing.T, p *pair, s *side, group, topic string, offs map[int32]int64) {
	t.Helper()
	var os kadm.Offsets
	for part, at := range offs {
		os.Add(kadm.Offset{Topic: topic, Partition: part, At: at, LeaderEpoch: -1})
	}
	resp, err := s.admin(t).CommitOffsets(p.ctx, group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

// committedOn is group's committed offsets of topic on s (partition →
// offset; absent: none).
func committedOn(t *testing.T, p *pair, s *side, group, topic string) map[int32]int64 {
	t.Helper()
	os, err := s.admin(t).FetchOffsets(p.ctx, group)
	if err != nil {
		t.Fatalf("fetch %s: %v", group, err)
	}
	out := map[int32]int64{}
	os.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At >= 0 {
			out[o.Partition] = o.At
		}
	})
	return out
}

// TestMirrorSyncGroupOffsetsAnyBroker: SyncMirrorGroupOffsets sent to
// each broker of a 3-node destination is answered by the one running the
// mirror's syncer (forwarded there): the same SyncerBrokerID everywhere,
// the group's offset synced by the first and unchanged after. A request
// marked forwarded (LocalOnly) at another broker is NOT_COORDINATOR; an
// unknown mirror or topic is named. Not parallel: a three-node cluster
// under -race runs alone (replicas_test.go).
func TestMirrorSyncGroupOffsetsAnyBroker(t *testing.T) {
	p := newPair(t, 2*time.Minute, startOne(t, "source"), startThree(t, "destination"))
	const topic = "any-broker"
	p.src.createTopic(t, p.ctx, topic, 1)
	writeEach(t, p, p.src, topic, 1, 10, "m")
	p.createMirror(oneHourSync)
	p.start(topic)
	p.waitMirroring(topic, 1, time.Minute)
	commitOn(t, p, p.src, "g", topic, map[int32]int64{0: 6})

	cl := p.mirror.Kgo()
	md, err := kadm.NewClient(cl).BrokerMetadata(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 3 {
		t.Fatalf("%d destination brokers", len(md.Brokers))
	}
	send := func(id int32, mirror string, localOnly bool, topics ...string) *mirrormsg.SyncMirrorGroupOffsetsResponse {
		t.Helper()
		req := mirrormsg.NewPtrSyncMirrorGroupOffsetsRequest()
		req.MirrorName, req.Topics, req.TimeoutMs, req.LocalOnly = mirror, topics, 10_000, localOnly
		kresp, err := cl.Broker(int(id)).Request(p.ctx, req)
		if err != nil {
			t.Fatalf("to broker %d: %v", id, err)
		}
		return kresp.(*mirrormsg.SyncMirrorGroupOffsetsResponse)
	}
	syncer := int32(-1)
	for i, b := range md.Brokers {
		var resp *mirrormsg.SyncMirrorGroupOffsetsResponse
		// Right after the start the syncer may still be starting
		// (COORDINATOR_NOT_AVAILABLE, retriable).
		p.waitFor(30*time.Second, fmt.Sprintf("broker %d answers", b.NodeID), func() string {
			resp = send(b.NodeID, mirrorName, false, topic)
			if resp.ErrorCode != 0 {
				return fmt.Sprintf("error %d %v", resp.ErrorCode, resp.ErrorMessage)
			}
			return ""
		})
		if syncer < 0 {
			syncer = resp.SyncerBrokerID
		}
		want := "unchanged"
		if i == 0 {
			want = "synced"
		}
		if resp.SyncerBrokerID != syncer || syncer < 0 || len(resp.Groups) != 1 || resp.Groups[0].GroupID != "g" ||
			len(resp.Groups[0].Partitions) != 1 || resp.Groups[0].Partitions[0].CommittedOffset != 6 || resp.Groups[0].Partitions[0].Outcome != want {
			t.Fatalf("broker %d answered %+v; want syncer %d, g p0 committed 6 %s", b.NodeID, resp, syncer, want)
		}
	}
	if got := committedOn(t, p, p.dst, "g", topic); got[0] != 6 {
		t.Fatalf("g on the destination: %v", got)
	}
	for _, b := range md.Brokers {
		if b.NodeID == syncer {
			continue
		}
		if resp := send(b.NodeID, mirrorName, true, topic); resp.ErrorCode != kerr.NotCoordinator.Code {
			t.Errorf("LocalOnly at broker %d (syncer %d): error %d, want NOT_COORDINATOR", b.NodeID, syncer, resp.ErrorCode)
		}
	}
	if resp := send(md.Brokers[0].NodeID, "nope", false, topic); resp.ErrorCode != mirrormsg.UnknownClusterMirror.Code {
		t.Errorf("unknown mirror: error %d", resp.ErrorCode)
	}
	if resp := send(md.Brokers[0].NodeID, mirrorName, false, "not-mirrored"); resp.ErrorCode != mirrormsg.TopicNotInClusterMirror.Code ||
		resp.ErrorMessage == nil || !strings.Contains(*resp.ErrorMessage, "not-mirrored") {
		t.Errorf("unknown topic: error %d %v", resp.ErrorCode, resp.ErrorMessage)
	}
}
