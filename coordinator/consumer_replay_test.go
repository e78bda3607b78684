package coordinator

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/records"
)

// TestConsumerGroupReplayRebuildsTheGroup: a consumer group caught mid
// reconciliation (a member revoking, one waiting for released partitions,
// a static member away, a regex subscription) is rebuilt field for field
// from its records when its partition is loaded again, its members carry
// on at their epochs, and the loaded members' session and rebalance
// timeouts run again.
func TestConsumerGroupReplayRebuildsTheGroup(t *testing.T) {
	h := newHarness(t)
	a := h.newConsumer("g", "a", "foo", "bar")
	s := h.newConsumer("g", "s", "foo").static("i")
	r := h.newConsumer("g", "r")
	r.regex = kmsg.StringPtr("ba.*")
	b := h.newConsumer("g", "b", "foo", "bar")
	a.join() // a has every partition
	s.join()
	r.join()
	b.join()
	a.heartbeat() // a is told to revoke and does not confirm yet
	s.leave(-2)
	ok := false
	h.withConsumerGroup("g", func(g *consumerGroup) {
		ok = g.member("a").state == memberUnrevokedPartitions && g.member("s").memberEpoch == leaveGroupStaticMemberEpoch &&
			len(g.regexes) == 1 && len(g.member("a").assignmentEpochs) > 0
	})
	if !ok {
		t.Fatalf("the group is not in the state the test wants:\n%s", h.dumpConsumerGroup("g"))
	}
	before := h.dumpConsumerGroup("g")

	h.restart()
	if after := h.dumpConsumerGroup("g"); after != before {
		t.Fatalf("reloaded group differs\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// Every record of the group is one Kafka's codecs read.
	seen := map[records.RecordType]bool{}
	for _, d := range h.log.records(t, PartitionFor("g", testPartitions)) {
		if d.consumer != nil {
			seen[records.RecordType(d.consumer.typ)] = true
		}
	}
	for _, typ := range []records.RecordType{records.TypeConsumerGroupMetadata, records.TypeConsumerGroupMemberMetadata,
		records.TypeConsumerGroupTargetAssignmentMetadata, records.TypeConsumerGroupTargetAssignmentMember,
		records.TypeConsumerGroupCurrentMemberAssignment, records.TypeConsumerGroupRegularExpression} {
		if !seen[typ] {
			t.Errorf("no %s record in the log", typ)
		}
	}

	// The members carry on where they were: b and r heartbeat at their
	// epochs; a, silent, is fenced at its rebalance timeout, restarted at
	// the load; s, away, at its session timeout.
	live := func(d time.Duration) {
		for ; d > 0; d -= 5 * time.Second {
			b.heartbeat()
			r.heartbeat()
			h.advance(min(d, 5*time.Second))
		}
		h.drainWrites()
	}
	live(30*time.Second + time.Millisecond)
	h.withConsumerGroup("g", func(g *consumerGroup) { ok = g.member("a") == nil && g.member("s") != nil })
	if !ok {
		t.Fatalf("30s after the load:\n%s", h.dumpConsumerGroup("g"))
	}
	live(15 * time.Second)
	if _, _, _, n := h.cgState("g"); n != 2 {
		t.Fatalf("45s after the load:\n%s", h.dumpConsumerGroup("g"))
	}
	h.settle(b, r)
	both := append(b.ownedSet(), r.ownedSet()...)
	slices.Sort(both)
	wantNames(t, "b and r share foo and bar", both,
		"bar/0", "bar/1", "foo/0", "foo/1", "foo/2")

	// Deleting the group after its members left removes it from the log
	// too.
	b.leave(-1)
	r.leave(-1)
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Groups = []string{"g"}
	wantCode(t, "delete", h.c.DeleteGroups(clientCtx("admin"), req).Groups[0].ErrorCode, 0)
	h.restart()
	if got := h.dumpConsumerGroup("g"); got != "none" {
		t.Fatalf("deleted group after reload:\n%s", got)
	}
}

// TestConsumerGroupRecordsAreKafkas: the records a heartbeat writes are
// Kafka's, byte for byte: the member's subscription with a null
// ClassicMemberMetadata tag, its assignment with the KIP-1251 epochs.
func TestConsumerGroupRecordsAreKafkas(t *testing.T) {
	h := newHarness(t)
	a := h.newConsumer("g", "a", "foo")
	a.join()
	recs := h.log.records(t, PartitionFor("g", testPartitions))
	var sub, cur *cgRecord
	for _, d := range recs {
		switch {
		case d.consumer == nil:
		case d.consumer.typ == cgRecordMemberMetadata:
			sub = d.consumer
		case d.consumer.typ == cgRecordCurrentAssignment:
			cur = d.consumer
		}
	}
	if sub == nil || cur == nil {
		t.Fatalf("records: %+v", recs)
	}
	mv := records.NewConsumerGroupMemberMetadataValue()
	mv.ClientID, mv.ClientHost = "client-a", "/192.0.2.7"
	mv.SubscribedTopicNames, mv.SubscribedTopicRegex = []string{"foo"}, kmsg.StringPtr("")
	mv.RebalanceTimeoutMs = 30000
	if got, want := encodeCGRecord(*sub).value, mv.AppendTo(nil); string(got) != string(want) {
		t.Fatalf("subscription value\n got %x\nwant %x", got, want)
	}
	foo := h.topicIDOf("foo")
	cv := records.ConsumerGroupCurrentMemberAssignmentValue{
		MemberEpoch: 1, PreviousMemberEpoch: 0, State: 0,
		AssignedPartitions:          []records.AssignedTopicPartitions{{TopicID: foo, Partitions: []int32{0, 1, 2}, AssignmentEpochs: []int32{1, 1, 1}}},
		PartitionsPendingRevocation: []records.AssignedTopicPartitions{},
	}
	if got, want := encodeCGRecord(*cur).value, cv.AppendTo(nil); string(got) != string(want) {
		t.Fatalf("current assignment value\n got %x\nwant %x", got, want)
	}
	// A record written before KIP-1251 gives each partition the member
	// epoch.
	cv.AssignedPartitions[0].AssignmentEpochs = nil
	cv.MemberEpoch = 7
	key := records.ConsumerGroupCurrentMemberAssignmentKey("g", "a")
	rec, err := decodeCGRecord(cgRecordCurrentAssignment, key.AppendTo(nil), cv.AppendTo(nil), false)
	if err != nil {
		t.Fatal(err)
	}
	if e := rec.subscription.assignmentEpochs[foo]; len(e) != 3 || e[0] != 7 || e[2] != 7 {
		t.Fatalf("epochs read from a record without them: %v", rec.subscription.assignmentEpochs)
	}
}
