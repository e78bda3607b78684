package replication

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sessionFetch sends a v12 fetch in a session.
func (h *harness) sessionFetch(id, epoch int32, parts []fetchPart, forget ...fetchPart) (*kmsg.FetchResponse, []fetchedPartition) {
	h.t.Helper()
	req := fetchReq(12, parts...)
	req.SessionID, req.SessionEpoch = id, epoch
	for _, f := range forget {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.Partitions = f.topic, []int32{f.partition}
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	res := h.fetch(req)
	return res.Resp, decodeFetch(h.t, res)
}

func names(parts []fetchedPartition) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p.topic+"-"+string(rune('0'+p.Partition)))
	}
	return out
}

func TestFetchSessionLifecycle(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 3})
	h.mustProduce("t", 0, "a", 2, 0)

	// A full fetch (epoch 0) creates a session holding every partition.
	resp, got := h.sessionFetch(0, 0, []fetchPart{fp("t", 0, 0), fp("t", 1, 0), fp("t", 2, 0)})
	if resp.ErrorCode != 0 || resp.SessionID == 0 || len(got) != 3 {
		t.Fatalf("full fetch: error %d session %d partitions %d", resp.ErrorCode, resp.SessionID, len(got))
	}
	id := resp.SessionID
	if h.rm.sessions.size() != 1 {
		t.Fatalf("%d sessions", h.rm.sessions.size())
	}

	// Epoch 1, nothing changed: the partitions are left out.
	resp, got = h.sessionFetch(id, 1, []fetchPart{fp("t", 0, 2)})
	if resp.ErrorCode != 0 || resp.SessionID != id || len(got) != 0 {
		t.Fatalf("unchanged incremental: error %d session %d partitions %v", resp.ErrorCode, resp.SessionID, names(got))
	}
	// New data in partition 1 only: only it is sent, read from the offset
	// the session remembers.
	h.mustProduce("t", 1, "b", 1, 0)
	resp, got = h.sessionFetch(id, 2, nil)
	if len(got) != 1 || got[0].Partition != 1 || len(got[0].values) != 1 || got[0].HighWatermark != 1 {
		t.Fatalf("incremental with data: %v", names(got))
	}
	// The client moves partition 1 on; a high watermark move alone is news.
	resp, got = h.sessionFetch(id, 3, []fetchPart{fp("t", 1, 1)})
	if len(got) != 0 {
		t.Fatalf("after moving on: %v", names(got))
	}

	// Wrong epoch and unknown session.
	if resp, _ = h.sessionFetch(id, 3, nil); resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || resp.SessionID != 0 || len(resp.Topics) != 0 {
		t.Fatalf("stale epoch: %+v", resp)
	}
	if resp, _ = h.sessionFetch(id+1, 1, nil); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: error %d", resp.ErrorCode)
	}
	// The failed requests did not move the session: epoch 4 still works.
	if resp, _ = h.sessionFetch(id, 4, nil); resp.ErrorCode != 0 {
		t.Fatalf("epoch 4: error %d", resp.ErrorCode)
	}

	// Forgetting partitions: forgotten ones are no longer fetched.
	resp, _ = h.sessionFetch(id, 5, nil, fp("t", 0, 0), fp("t", 1, 0))
	if resp.ErrorCode != 0 || resp.SessionID != id {
		t.Fatalf("forget: %+v", resp)
	}
	h.mustProduce("t", 0, "c", 1, 2)
	h.mustProduce("t", 2, "d", 1, 0)
	if _, got = h.sessionFetch(id, 6, nil); len(got) != 1 || got[0].Partition != 2 {
		t.Fatalf("after forgetting 0 and 1: %v", names(got))
	}
	// Forgetting the last partition closes the session.
	resp, _ = h.sessionFetch(id, 7, nil, fp("t", 2, 0))
	if resp.ErrorCode != 0 || resp.SessionID != 0 || h.rm.sessions.size() != 0 {
		t.Fatalf("empty session: %+v, %d sessions", resp, h.rm.sessions.size())
	}
	if resp, _ = h.sessionFetch(id, 8, nil); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("closed session: error %d", resp.ErrorCode)
	}

	// A full fetch naming a session closes it; FINAL_EPOCH fetches without
	// a session.
	resp, _ = h.sessionFetch(0, 0, []fetchPart{fp("t", 0, 0)})
	id = resp.SessionID
	resp, got = h.sessionFetch(id, -1, []fetchPart{fp("t", 0, 0)})
	if resp.SessionID != 0 || len(got) != 1 || h.rm.sessions.size() != 0 {
		t.Fatalf("final epoch: session %d partitions %d sessions %d", resp.SessionID, len(got), h.rm.sessions.size())
	}
	// Before v7 there are no sessions.
	req := fetchReq(6, fp("t", 0, 0))
	req.SessionEpoch = 0
	if res := h.fetch(req); res.Resp.SessionID != 0 || h.rm.sessions.size() != 0 {
		t.Fatal("v6 created a session")
	}
}

func TestFetchSessionErrorsAlwaysSent(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 2})
	resp, _ := h.sessionFetch(0, 0, []fetchPart{fp("t", 0, 0), fp("t", 1, 5)})
	id := resp.SessionID
	// Partition 1's offset is out of range: the error is repeated on every
	// incremental response; partition 0 has no news.
	for epoch := int32(1); epoch <= 2; epoch++ {
		_, got := h.sessionFetch(id, epoch, nil)
		if len(got) != 1 || got[0].Partition != 1 || got[0].ErrorCode != kerr.OffsetOutOfRange.Code {
			t.Fatalf("epoch %d: %+v", epoch, got)
		}
	}
	// Fixing the offset sends the partition again with its (now valid)
	// high watermark, even without data.
	_, got := h.sessionFetch(id, 3, []fetchPart{fp("t", 1, 0)})
	if len(got) != 1 || got[0].Partition != 1 || got[0].ErrorCode != 0 || got[0].HighWatermark != 0 {
		t.Fatalf("after the error cleared: %+v", got)
	}
}

// Partitions that returned data move to the back of the session, so the
// next fetch reads the others first (Kafka's fairness rotation).
func TestFetchSessionRotation(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 2})
	resp, _ := h.sessionFetch(0, 0, []fetchPart{fp("t", 0, 0), fp("t", 1, 0)})
	id := resp.SessionID
	h.mustProduce("t", 0, "a", 1, 0)
	if _, got := h.sessionFetch(id, 1, nil); len(got) != 1 || got[0].Partition != 0 {
		t.Fatalf("%v", names(got))
	}
	h.mustProduce("t", 0, "b", 1, 1)
	h.mustProduce("t", 1, "c", 1, 0)
	_, got := h.sessionFetch(id, 2, []fetchPart{fp("t", 0, 1)})
	if len(got) != 2 || got[0].Partition != 1 || got[1].Partition != 0 {
		t.Fatalf("rotation: %v, want t-1 before t-0", names(got))
	}
}

func TestFetchSessionTopicIDs(t *testing.T) {
	h := newHarness(t)
	topic := h.createTopic("t", topicSpec{})
	req := fetchReq(13, fp("", 0, 0))
	req.Topics[0].TopicID = topic.ID
	req.SessionEpoch = 0
	res := h.fetch(req)
	id := res.Resp.SessionID
	if id == 0 || res.Resp.Topics[0].TopicID != topic.ID {
		t.Fatalf("v13 session: %+v", res.Resp)
	}
	// Switching to names in the same session is refused.
	if resp, _ := h.sessionFetch(id, 1, nil); resp.ErrorCode != kerr.FetchSessionTopicIDError.Code {
		t.Fatalf("v12 in a v13 session: error %d", resp.ErrorCode)
	}
	// A v13 incremental fetch sees the topic by id; once the topic is gone
	// the entry answers UNKNOWN_TOPIC_ID.
	inc := kmsg.NewPtrFetchRequest()
	inc.Version, inc.ReplicaID, inc.MaxBytes, inc.SessionID, inc.SessionEpoch = 13, -1, 1<<20, id, 1
	h.mustProduce("t", 0, "a", 1, 0)
	res = h.fetch(inc)
	if got := decodeFetch(t, res); len(got) != 1 || len(got[0].values) != 1 || res.Resp.Topics[0].TopicID != topic.ID {
		t.Fatalf("v13 incremental: %+v", res.Resp)
	}
	h.deleteTopic("t")
	inc.SessionEpoch = 2
	res = h.fetch(inc)
	if got := decodeFetch(t, res); len(got) != 1 || got[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("deleted topic in a v13 session: %+v", res.Resp)
	}
}

func TestFetchSessionEviction(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.FetchSessionCacheSlots = 1; c.FetchSessionEvictionMs = 1000 })
	h.createTopic("t", topicSpec{partitions: 3})
	full := func(replica int32, parts ...fetchPart) int32 {
		req := fetchReq(12, parts...)
		req.SessionEpoch, req.ReplicaID = 0, replica
		return h.fetch(req).Resp.SessionID
	}
	a := full(-1, fp("t", 0, 0))
	if a == 0 {
		t.Fatal("no session")
	}
	// The cache is full and session a is young: a larger consumer session
	// may not evict it.
	if b := full(-1, fp("t", 0, 0), fp("t", 1, 0)); b != 0 {
		t.Fatalf("a young session was evicted by a consumer: got session %d", b)
	}
	// A follower (privileged) session evicts a consumer session at once.
	h.createTopic("r", topicSpec{replicas: []int32{localNode, 2}})
	f := full(2, fp("r", 0, 0))
	if f == 0 || h.rm.sessions.evictions != 1 {
		t.Fatalf("follower session %d, evictions %d", f, h.rm.sessions.evictions)
	}
	if _, ok := h.rm.sessions.get(a); ok {
		t.Fatal("session a survived")
	}
	// A consumer cannot evict the young follower session...
	if c := full(-1, fp("t", 0, 0), fp("t", 1, 0), fp("t", 2, 0)); c != 0 {
		t.Fatalf("a consumer evicted a privileged session: %d", c)
	}
	// ...until it has been idle longer than the eviction time.
	h.clock.Advance(1001 * time.Millisecond)
	c := full(-1, fp("t", 0, 0))
	if c == 0 || h.rm.sessions.evictions != 2 {
		t.Fatalf("stale session not evicted: %d, evictions %d", c, h.rm.sessions.evictions)
	}
	if resp, _ := h.sessionFetch(f, 1, nil); resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("evicted session: error %d", resp.ErrorCode)
	}
	// An old session (created more than the eviction time ago) may be
	// evicted by a bigger one even if it is in use.
	h.clock.Advance(1001 * time.Millisecond)
	if resp, _ := h.sessionFetch(c, 1, nil); resp.ErrorCode != 0 {
		t.Fatalf("touch: %d", resp.ErrorCode)
	}
	if d := full(-1, fp("t", 0, 0)); d != 0 {
		t.Fatalf("an equal-size session evicted an old one: %d", d)
	}
	if d := full(-1, fp("t", 0, 0), fp("t", 1, 0)); d == 0 {
		t.Fatal("a bigger session did not evict an old one")
	}
}

func TestFetchSessionsDisabled(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.FetchSessionCacheSlots = -1 })
	h.createTopic("t", topicSpec{})
	resp, got := h.sessionFetch(0, 0, []fetchPart{fp("t", 0, 0)})
	if resp.SessionID != 0 || len(got) != 1 {
		t.Fatalf("sessions disabled: %+v", resp)
	}
}

// Two requests racing on one session epoch: the second is refused, as
// Kafka refuses a duplicate.
func TestFetchSessionDuplicateEpoch(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	resp, _ := h.sessionFetch(0, 0, []fetchPart{fp("t", 0, 0)})
	id := resp.SessionID
	req := fetchReq(12)
	req.SessionID, req.SessionEpoch, req.MaxWaitMillis, req.MinBytes = id, 1, 20000, 1
	done := make(chan *kmsg.FetchResponse, 1)
	go func() { done <- h.rm.Fetch(context.Background(), req).Resp }()
	time.Sleep(20 * time.Millisecond)
	if dup, _ := h.sessionFetch(id, 1, nil); dup.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("duplicate epoch: error %d", dup.ErrorCode)
	}
	h.mustProduce("t", 0, "a", 1, 0)
	select {
	case r := <-done:
		if r.ErrorCode != 0 || len(r.Topics) != 1 {
			t.Fatalf("the first request: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("long poll in a session not woken")
	}
}
