package broker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/mirror/state"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// mirrorOpt lets a kgo client send the mirror RPCs.
var mirrorOpt = kgo.MaxVersions(mirrormsg.MaxVersions(nil))

// sourceTopicIDs creates topics on a source broker (name, partitions) and
// returns their ids.
func sourceTopicIDs(ctx context.Context, t *testing.T, adm *kadm.Client, topics map[string]int32) map[string]raftmeta.Uuid {
	t.Helper()
	out := map[string]raftmeta.Uuid{}
	for name, parts := range topics {
		createTopic(t, adm, name, parts)
	}
	md, err := adm.Metadata(ctx)
	if err != nil {
		t.Fatalf("source metadata: %v", err)
	}
	for name := range topics {
		td, ok := md.Topics[name]
		if !ok {
			t.Fatalf("source has no topic %s", name)
		}
		out[name] = raftmeta.Uuid(td.ID)
	}
	return out
}

// brokerRequest sends req to broker id and fails the test on a transport
// error.
func brokerRequest[R kmsg.Response](ctx context.Context, t *testing.T, cl *kgo.Client, id int32, req kmsg.Request) R {
	t.Helper()
	resp, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		t.Fatalf("%s to broker %d: %v", mirrormsg.NameForKey(req.Key()), id, err)
	}
	return resp.(R)
}

// createMirrorVia creates a mirror of the source at bootstrap through
// broker id.
func createMirrorVia(ctx context.Context, t *testing.T, cl *kgo.Client, id int32, name, bootstrap string) {
	t.Helper()
	req := mirrormsg.NewPtrCreateMirrorRequest()
	req.MirrorName = name
	cfg := mirrormsg.NewCreateMirrorRequestMirrorConfig()
	cfg.Name, cfg.Value = "bootstrap.servers", &bootstrap
	req.Config = append(req.Config, cfg)
	if resp := brokerRequest[*mirrormsg.CreateMirrorResponse](ctx, t, cl, id, req); resp.ErrorCode != 0 {
		t.Fatalf("CreateMirror via %d: %s", id, errName(resp.ErrorCode))
	}
}

// startTopicsResult is a StartMirrorTopics answer as "topic:ERROR_NAME"
// strings ("topic:" for success), sorted.
func startTopicsResult(resp *mirrormsg.StartMirrorTopicsResponse) []string {
	var out []string
	for _, t := range resp.Topics {
		name := ""
		if t.ErrorCode != 0 {
			name = mirrormsg.TypedErrorForCode(t.ErrorCode).Message
		}
		out = append(out, t.Name+":"+name)
	}
	slices.Sort(out)
	return out
}

// checkMirrorTopic checks that img has topic with the source's id, parts
// partitions and mirror.name mirror.
func checkMirrorTopic(t *testing.T, img *raftmeta.Image, topic string, id raftmeta.Uuid, parts int, mirror string) {
	t.Helper()
	tt, ok := img.Topics[topic]
	if !ok {
		t.Fatalf("destination has no topic %s", topic)
	}
	if tt.ID != id || len(tt.Partitions) != parts {
		t.Fatalf("destination %s: id %s with %d partitions, want the source's %s with %d", topic, tt.ID, len(tt.Partitions), id, parts)
	}
	if got := img.TopicConfig(topic)[raftmeta.MirrorNameConfig]; got != mirror {
		t.Fatalf("destination %s: mirror.name %q, want %q", topic, got, mirror)
	}
}

// readStateReq is a ReadMirrorStates of one partition.
func readStateReq(mirror, topic string, p int32) *mirrormsg.ReadMirrorStatesRequest {
	req := mirrormsg.NewPtrReadMirrorStatesRequest()
	req.MirrorName = mirror
	td := mirrormsg.NewReadMirrorStatesRequestTopicData()
	td.Name = topic
	pd := mirrormsg.NewReadMirrorStatesRequestPartitionData()
	pd.PartitionIndex = p
	td.Partitions = append(td.Partitions, pd)
	req.Topics = append(req.Topics, td)
	return req
}

// writeStateReq is a WriteMirrorStates of one partition.
func writeStateReq(mirror, topic string, p int32, rec partition.Record, expected int32) *mirrormsg.WriteMirrorStatesRequest {
	req := mirrormsg.NewPtrWriteMirrorStatesRequest()
	req.MirrorName = mirror
	tm := mirrormsg.NewWriteMirrorStatesRequestTopicMetadata()
	tm.TopicName = topic
	tm.Partitions = append(tm.Partitions, state.WritePartition(p, rec, expected))
	req.Topics = append(req.Topics, tm)
	return req
}

// readState reads one partition's state from broker id.
func readState(ctx context.Context, t *testing.T, cl *kgo.Client, id int32, mirror, topic string, p int32) mirrormsg.ReadMirrorStatesResponsePartitionResult {
	t.Helper()
	resp := brokerRequest[*mirrormsg.ReadMirrorStatesResponse](ctx, t, cl, id, readStateReq(mirror, topic, p))
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("ReadMirrorStates answer shape: %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// writeState writes one partition's state on broker id and returns the
// result.
func writeState(ctx context.Context, t *testing.T, cl *kgo.Client, id int32, mirror, topic string, p int32, rec partition.Record, expected int32) mirrormsg.WriteMirrorStatesResponsePartitionResult {
	t.Helper()
	resp := brokerRequest[*mirrormsg.WriteMirrorStatesResponse](ctx, t, cl, id, writeStateReq(mirror, topic, p, rec, expected))
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("WriteMirrorStates answer shape: %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// coordinatorOf is the broker coordinating a record in img.
func coordinatorOf(t *testing.T, img *raftmeta.Image, mirror, topic string, p int32) int32 {
	t.Helper()
	tt, ok := img.Topics[topic]
	if !ok {
		t.Fatalf("no topic %s", topic)
	}
	id, ok := state.CoordinatorFor(img, state.Key{Mirror: mirror, TopicID: tt.ID, Partition: p})
	if !ok {
		t.Fatalf("no coordinator for %s/%s-%d", mirror, topic, p)
	}
	return id
}

// preparing is a PREPARING record written by the leader at leaderEpoch.
func preparing(leaderEpoch int32) partition.Record {
	r := partition.EmptyRecord()
	r.State, r.LeaderEpoch = partition.StatePreparing, leaderEpoch
	return r
}

// errName is a code's Kafka name, "" for 0.
func errName(code int16) string {
	if code == 0 {
		return ""
	}
	return mirrormsg.TypedErrorForCode(code).Message
}

// waitUntil polls cond every 20 ms until it holds or timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func describeShape(m mirrormsg.DescribeMirrorsResponseDescribedMirror) string {
	s := ""
	for _, tt := range m.Topics {
		s += tt.TopicName + "["
		for i, p := range tt.Partitions {
			if i > 0 {
				s += " "
			}
			s += fmt.Sprint(p.PartitionIndex)
		}
		s += "]"
	}
	return s
}

// testBumpLeaderEpochs raises orders-0's leader epoch through
// BumpLeaderEpochs sent to broker via (forwarded unless it is the
// controller) on behalf of the partition's leader, checks the controller's
// fencing, and that a __mirror_state write at the old epoch is fenced.
// orders must be a mirror topic; images are every broker's, via's first.
func testBumpLeaderEpochs(ctx context.Context, t *testing.T, cl *kgo.Client, images func() []*raftmeta.Image, via int32) {
	t.Helper()
	image := func() *raftmeta.Image { return images()[0] }
	bump := func(broker, leaderEpoch, minEpoch int32) (int16, int16) {
		img := image()
		req := mirrormsg.NewPtrBumpLeaderEpochsRequest()
		req.BrokerID = broker
		rt := mirrormsg.NewBumpLeaderEpochsRequestTopicState()
		rt.TopicID = img.Topics["orders"].ID
		rp := mirrormsg.NewBumpLeaderEpochsRequestLeaderEpochState()
		rp.PartitionIndex, rp.LeaderEpoch, rp.MinLeaderEpoch = 0, leaderEpoch, minEpoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := brokerRequest[*mirrormsg.BumpLeaderEpochsResponse](ctx, t, cl, via, req)
		if resp.ErrorCode != 0 {
			return resp.ErrorCode, 0
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("BumpLeaderEpochs answer shape: %+v", resp)
		}
		return 0, resp.Topics[0].Partitions[0].ErrorCode
	}
	// The mirror manager may move the epoch itself: retry on a race.
	var leader, epoch int32
	for attempt := 0; ; attempt++ {
		p := image().Topics["orders"].Partitions[0]
		leader, epoch = p.Leader, p.LeaderEpoch
		top, code := bump(leader, epoch, epoch+5)
		if top != 0 {
			t.Fatalf("bump: %s", errName(top))
		}
		if code == 0 {
			break
		}
		if attempt == 5 || errName(code) != "FENCED_LEADER_EPOCH" {
			t.Fatalf("bump orders-0 from %d to %d as %d: %s", epoch, epoch+5, leader, errName(code))
		}
	}
	waitUntil(t, 10*time.Second, "orders-0's leader epoch raised on every broker", func() bool {
		for _, img := range images() {
			if img.Topics["orders"].Partitions[0].LeaderEpoch < epoch+5 {
				return false
			}
		}
		return true
	})
	if _, code := bump(leader, epoch, epoch+6); errName(code) != "FENCED_LEADER_EPOCH" {
		t.Fatalf("bump at the old epoch: %s", errName(code))
	}
	// An unregistered broker is fenced for the whole request.
	if top, _ := bump(leader+100, -1, -1); errName(top) != "STALE_BROKER_EPOCH" {
		t.Fatalf("bump as an unknown broker: %s", errName(top))
	}
	// A __mirror_state write by the old leader epoch is fenced. The
	// record is another mirror's than the manager's, so the expected state
	// epoch is known.
	coord := coordinatorOf(t, image(), "other", "orders", 0)
	if got := writeState(ctx, t, cl, coord, "other", "orders", 0, preparing(epoch), 0); errName(got.ErrorCode) != "FENCED_LEADER_EPOCH" {
		t.Fatalf("write at the old leader epoch: %s", errName(got.ErrorCode))
	}
	cur := image().Topics["orders"].Partitions[0].LeaderEpoch
	if got := writeState(ctx, t, cl, coord, "other", "orders", 0, preparing(cur), 0); got.ErrorCode != 0 || got.StateEpoch != 1 {
		t.Fatalf("write at the new leader epoch %d: %s", cur, errName(got.ErrorCode))
	}
}
