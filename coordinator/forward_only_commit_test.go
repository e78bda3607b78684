package coordinator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// forwardCommit sends a forward-only commit (a mirror sync's, issue 27) of
// offsets for group and returns, per "topic/partition", its code and the
// offset it kept (-1 when it wrote).
func (h *harness) forwardCommit(group string, offsets map[string]map[int32]int64) (codes map[string]int16, kept map[string]int64) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 9
	req.Group, req.Generation = group, -1
	mirrormsg.SetForwardOnly(req)
	for _, topic := range sortedKeys(offsets) {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		for _, p := range sortedKeys(offsets[topic]) {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.Metadata = p, offsets[topic][p], kmsg.StringPtr("sync")
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp := h.c.OffsetCommit(context.Background(), req)
	codes, kept = commitCodes(resp), map[string]int64{}
	for _, t := range resp.Topics {
		for i := range t.Partitions {
			k, ok := mirrormsg.Kept(&t.Partitions[i])
			if !ok {
				k = -1
			}
			kept[fmt.Sprintf("%s/%d", t.Topic, t.Partitions[i].Partition)] = k
		}
	}
	return codes, kept
}

// TestForwardOnlyCommitIntoActiveGroup: a forward-only commit is taken by
// a classic group with a live member (a plain member-less commit is not),
// writes only the partitions whose committed offset it exceeds, and names
// the offset it kept for the others; a share group refuses it.
func TestForwardOnlyCommitIntoActiveGroup(t *testing.T) {
	h := newHarness(t)
	m := h.newMember("g", "c")
	wantCode(t, "join", m.join().ErrorCode, 0)
	wantCode(t, "sync", m.sync(nil).ErrorCode, 0)
	wantCode(t, "member commit", commitCodes(h.commit(9, "g", m.id, m.generation, map[string]map[int32]int64{"foo": {0: 10, 1: 50}}))["foo/0"], 0)
	wantCode(t, "plain commit to the active group", commitCodes(h.commit(9, "g", "", -1, map[string]map[int32]int64{"foo": {0: 20}}))["foo/0"], unknownMemberID)

	codes, kept := h.forwardCommit("g", map[string]map[int32]int64{"foo": {0: 20, 1: 30, 2: 5}, "nope": {0: 1}})
	if codes["foo/0"] != 0 || codes["foo/1"] != 0 || codes["foo/2"] != 0 || codes["nope/0"] != unknownTopicOrPartition {
		t.Fatalf("codes %v", codes)
	}
	if kept["foo/0"] != -1 || kept["foo/1"] != 50 || kept["foo/2"] != -1 {
		t.Fatalf("kept %v, want foo/1 kept at 50, foo/0 and foo/2 written", kept)
	}
	offs, code := h.fetchAll("g")
	wantCode(t, "fetch", code, 0)
	if offs["foo/0"] != "20/-1/sync" || offs["foo/1"] != "50/5/m50" || offs["foo/2"] != "5/-1/sync" {
		t.Fatalf("offsets %v", offs)
	}
	if st, _, members, _ := h.groupState("g"); st != stateStable || members != 1 {
		t.Fatalf("group %v with %d members after the sync, want Stable with its member", st, members)
	}
	// Equal is not forward.
	if _, kept := h.forwardCommit("g", map[string]map[int32]int64{"foo": {0: 20}}); kept["foo/0"] != 20 {
		t.Fatalf("equal offset: kept %v, want 20", kept)
	}
	// An unknown group becomes a simple group, as a generation -1 commit
	// makes one.
	if codes, _ := h.forwardCommit("fresh", map[string]map[int32]int64{"foo": {0: 3}}); codes["foo/0"] != 0 {
		t.Fatalf("fresh group: %v", codes)
	}
}

// TestForwardOnlyCommitRacesMemberCommits: a member commits increasing
// offsets while forward-only commits of random offsets run concurrently;
// replaying the __consumer_offsets records in log order, every
// forward-only record is above the offset it replaced (the compare and
// the write are one step under the shard lock), and each forward-only
// answer is consistent: written, or kept at an offset not below it.
func TestForwardOnlyCommitRacesMemberCommits(t *testing.T) {
	h := newHarness(t)
	m := h.newMember("race", "c")
	wantCode(t, "join", m.join().ErrorCode, 0)
	wantCode(t, "sync", m.sync(nil).ErrorCode, 0)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 1))
		at := int64(0)
		for range 300 {
			at += rng.Int64N(5)
			h.commit(9, "race", m.id, m.generation, map[string]map[int32]int64{"foo": {0: at}})
		}
	}()
	bad := make(chan string, 1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 2))
		for range 300 {
			off := rng.Int64N(800)
			codes, kept := h.forwardCommit("race", map[string]map[int32]int64{"foo": {0: off}})
			if codes["foo/0"] != 0 || (kept["foo/0"] != -1 && kept["foo/0"] < off) {
				select {
				case bad <- errName(codes["foo/0"]):
				default:
				}
			}
		}
	}()
	wg.Wait()
	select {
	case b := <-bad:
		t.Fatalf("a forward-only commit answered %s or kept a smaller offset", b)
	default:
	}
	h.drainWrites()
	prev, syncs := int64(-1), 0
	for _, r := range h.log.records(t, PartitionFor("race", testPartitions)) {
		if r.offsetKey == nil || r.offsetValue == nil || r.offsetKey.Partition != 0 {
			continue
		}
		if r.offsetValue.Metadata == "sync" {
			syncs++
			if r.offsetValue.Offset <= prev {
				t.Fatalf("forward-only record %d replaced %d (seed %d)", r.offsetValue.Offset, prev, seed)
			}
		}
		prev = r.offsetValue.Offset
	}
	if syncs == 0 {
		t.Fatalf("no forward-only commit was written (seed %d)", seed)
	}
	t.Logf("%d forward-only records among the member's", syncs)
}

// TestForwardOnlyCommitIntoConsumerGroup: the same for a KIP-848 consumer
// group with a member: a member-less plain commit is refused, the
// forward-only one is written above the member's offset and kept below it.
func TestForwardOnlyCommitIntoConsumerGroup(t *testing.T) {
	h := newHarness(t)
	m := h.newConsumer("cg", "c", "foo")
	if r := m.join(); r.ErrorCode != 0 {
		t.Fatalf("join: %s", errName(r.ErrorCode))
	}
	wantCode(t, "plain commit to the active group", commitCodes(h.commit(9, "cg", "", -1, map[string]map[int32]int64{"foo": {0: 20}}))["foo/0"], unknownMemberID)
	if codes, kept := h.forwardCommit("cg", map[string]map[int32]int64{"foo": {0: 20}}); codes["foo/0"] != 0 || kept["foo/0"] != -1 {
		t.Fatalf("forward-only into a consumer group: %v kept %v", codes, kept)
	}
	if _, kept := h.forwardCommit("cg", map[string]map[int32]int64{"foo": {0: 7}}); kept["foo/0"] != 20 {
		t.Fatalf("forward-only below: kept %v, want 20", kept)
	}
	if st, _, _, members := h.cgState("cg"); members != 1 {
		t.Fatalf("consumer group %s with %d members after the sync", st, members)
	}
}
