package broker_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// describeTopicPartitions sends one DescribeTopicPartitions (KIP-966) with
// kgo: kadm has no call for it, and kafka-go does not know key 75.
func describeTopicPartitions(t *testing.T, cl *kgo.Client, limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	for _, name := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = name
		req.Topics = append(req.Topics, rt)
	}
	req.ResponsePartitionLimit, req.Cursor = limit, cursor
	resp, err := req.RequestWith(testCtx(t, 15*time.Second), cl)
	if err != nil {
		t.Fatalf("DescribeTopicPartitions: %v", err)
	}
	return resp
}

// topicPartitionsSummary is a response as "topic:error[p0 p1 ...]" items and
// the next cursor, for comparing whole pages.
func topicPartitionsSummary(resp *kmsg.DescribeTopicPartitionsResponse) string {
	var s string
	for _, rt := range resp.Topics {
		var ps []int32
		for _, p := range rt.Partitions {
			ps = append(ps, p.Partition)
		}
		s += fmt.Sprintf("%s:%s%v ", *rt.Topic, errName(rt.ErrorCode), ps)
	}
	if nc := resp.NextCursor; nc != nil {
		s += fmt.Sprintf("next=%s/%d", nc.Topic, nc.Partition)
	}
	return s
}

// TestDescribeTopicPartitions: the Java admin client's describeTopics (3.8+)
// pages through every topic with DescribeTopicPartitions. With
// max.request.partition.size.limit=4 a walk over 11 partitions of three
// topics (and the internal __consumer_offsets) takes pages of at most 4
// partitions, resuming at each NextCursor, and sees every partition once, in
// order, with the leader, replicas and ISR of Metadata and empty ELR lists;
// named topics, unknown and invalid names, a cursor on a deleted topic and
// bad cursors answer as Kafka's DescribeTopicPartitionsRequestHandler.
func TestDescribeTopicPartitions(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig("max.request.partition.size.limit=4",
		"offsets.topic.num.partitions=2", "offsets.topic.replication.factor=1"))
	adm := b.Admin(t)
	createTopic(t, adm, "alpha", 3)
	createTopic(t, adm, "beta", 5)
	createTopic(t, adm, "gamma", 1)
	cl := b.Client(t)
	// __consumer_offsets, an internal topic, comes with the first group.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{"g"}
	send(t, cl, fc, func(r *kmsg.FindCoordinatorResponse) int16 { return r.Coordinators[0].ErrorCode })

	img := b.Node().Image()
	var want, got []string
	for _, name := range img.TopicNames() {
		for _, p := range img.Topics[name].Partitions {
			want = append(want, fmt.Sprintf("%s/%d", name, p.Index))
		}
	}
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	pages := 0
	for {
		// The client asks for 2000; the broker's limit, 4, wins.
		resp := describeTopicPartitions(t, cl, 2000, cursor)
		pages++
		n := 0
		for _, rt := range resp.Topics {
			if rt.ErrorCode != 0 {
				t.Fatalf("page %d: %s: %v", pages, *rt.Topic, kerr.ErrorForCode(rt.ErrorCode))
			}
			it := img.Topics[*rt.Topic]
			if rt.TopicID != it.ID || rt.IsInternal != (*rt.Topic == "__consumer_offsets") {
				t.Errorf("%s: id %x internal %t", *rt.Topic, rt.TopicID, rt.IsInternal)
			}
			if rt.AuthorizedOperations != 0b110111111000 { // every topic operation, with no authorizer
				t.Errorf("%s: authorized operations %b", *rt.Topic, rt.AuthorizedOperations)
			}
			for _, p := range rt.Partitions {
				n++
				got = append(got, fmt.Sprintf("%s/%d", *rt.Topic, p.Partition))
				ip := it.Partitions[p.Partition]
				if p.LeaderID != ip.Leader || p.LeaderEpoch != ip.LeaderEpoch || !slices.Equal(p.Replicas, ip.Replicas) || !slices.Equal(p.ISR, ip.ISR) ||
					p.EligibleLeaderReplicas == nil || len(p.EligibleLeaderReplicas) != 0 || p.LastKnownELR == nil || len(p.LastKnownELR) != 0 ||
					len(p.OfflineReplicas) != 0 || p.ErrorCode != 0 {
					t.Errorf("%s/%d: %+v, metadata has %+v", *rt.Topic, p.Partition, p, *ip)
				}
			}
		}
		if n > 4 {
			t.Fatalf("page %d has %d partitions, over the broker's limit of 4: %s", pages, n, topicPartitionsSummary(resp))
		}
		if resp.NextCursor == nil {
			break
		}
		if pages > 10 {
			t.Fatal("the cursor walk does not end")
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	if !slices.Equal(got, want) || pages != 3 {
		t.Fatalf("%d pages saw %v, want %v in 3 pages", pages, got, want)
	}

	for _, tc := range []struct {
		name   string
		limit  int32
		cursor *kmsg.DescribeTopicPartitionsRequestCursor
		topics []string
		want   string
	}{
		// Kafka's exact page ends: a limit that ends a topic points the
		// cursor at the next topic's partition 0.
		{"limit ends a topic", 3, nil, nil, "__consumer_offsets:[0 1] alpha:[0] next=alpha/1"},
		{"limit ends at a topic's end", 3, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "alpha"}, nil, "alpha:[0 1 2] next=beta/0"},
		{"the client's limit is below the broker's", 2, nil, nil, "__consumer_offsets:[0 1] next=alpha/0"},
		{"a limit below 1 is 1", 0, nil, nil, "__consumer_offsets:[0] next=__consumer_offsets/1"},
		{"cursor inside a topic", 3, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "beta", Partition: 3}, nil, "beta:[3 4] gamma:[0] "},
		// The cursor's topic was deleted: the walk resumes at the next name.
		{"cursor on a deleted topic", 4, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "b-gone", Partition: 2}, nil, "beta:[0 1 2 3] next=beta/4"},
		{"cursor past a topic's end", 4, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "gamma", Partition: 9}, nil, "gamma:[] "},
		{"cursor at the largest partition index", 4, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "gamma", Partition: math.MaxInt32}, []string{"gamma"}, "gamma:[] "},
		{"a negative limit is 1", -5, nil, []string{"gamma", "beta"}, "beta:[0] next=beta/1"},
		{"named topics, sorted, unknown and invalid", 100, nil, []string{"gamma", "missing", "bad name!", "gamma"},
			"bad name!:" + errName(kerr.InvalidTopicException.Code) + "[] gamma:[0] missing:" + errName(kerr.UnknownTopicOrPartition.Code) + "[] "},
		// The limit reached, the next named topic is the cursor, whether
		// it exists or not.
		{"named topics past the limit", 100, nil, []string{"missing", "alpha", "gamma", "beta"}, "alpha:[0 1 2] beta:[0] next=beta/1"},
		{"named, from the cursor", 100, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "beta", Partition: 4}, []string{"alpha", "beta", "gamma"}, "beta:[4] gamma:[0] "},
		// Bad cursors: INVALID_REQUEST on every named topic.
		{"cursor topic not named", 100, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "beta"}, []string{"alpha", "gamma"},
			"alpha:" + errName(kerr.InvalidRequest.Code) + "[] gamma:" + errName(kerr.InvalidRequest.Code) + "[] "},
		{"negative cursor partition", 100, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "alpha", Partition: -1}, []string{"alpha"},
			"alpha:" + errName(kerr.InvalidRequest.Code) + "[] "},
	} {
		if got := topicPartitionsSummary(describeTopicPartitions(t, cl, tc.limit, tc.cursor, tc.topics...)); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestDescribeTopicPartitionsAuthz: DESCRIBE on a topic decides, as in
// Kafka: listing all topics leaves the others out silently; a named topic
// the client may not describe is TOPIC_AUTHORIZATION_FAILED, with no id and
// after the rest, whether it exists or not; authorized operations are the
// client's.
func TestDescribeTopicPartitionsAuthz(t *testing.T) {
	sc := startSecured(t, 1)
	createTopic(t, sc.adm, "visible", 2)
	createTopic(t, sc.adm, "hidden", 2)
	lit, allow := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLPermissionTypeAllow
	sc.createACLs(t, []kmsg.CreateACLsRequestCreation{
		aclOf(kmsg.ACLResourceTypeTopic, "visible", lit, pAlice, kmsg.ACLOperationRead, allow),
	})
	alice := sc.clients[pAlice]
	// Broker handles need the cluster's brokers in the client's metadata.
	if _, err := kmsg.NewPtrMetadataRequest().RequestWith(testCtx(t, 10*time.Second), alice); err != nil {
		t.Fatal(err)
	}

	all := describeTopicPartitions(t, alice, 100, nil)
	if got := topicPartitionsSummary(all); got != "visible:[0 1] " {
		t.Errorf("all topics as alice: %q", got)
	}
	if ops := all.Topics[0].AuthorizedOperations; ops != 1<<kmsg.ACLOperationRead|1<<kmsg.ACLOperationDescribe {
		t.Errorf("alice's authorized operations on visible: %b, want READ and DESCRIBE", ops)
	}
	named := describeTopicPartitions(t, alice, 100, nil, "hidden", "nonexistent", "visible")
	denied := errName(kerr.TopicAuthorizationFailed.Code)
	if got, want := topicPartitionsSummary(named), "visible:[0 1] hidden:"+denied+"[] nonexistent:"+denied+"[] "; got != want {
		t.Errorf("named topics as alice:\n got %q\nwant %q", got, want)
	}
	for _, rt := range named.Topics[1:] {
		if rt.TopicID != [16]byte{} {
			t.Errorf("%s: the id of a topic alice may not describe: %x", *rt.Topic, rt.TopicID)
		}
	}
	if got := topicPartitionsSummary(describeTopicPartitions(t, sc.clients[pAdmin], 100, nil)); got != "hidden:[0 1] visible:[0 1] " {
		t.Errorf("all topics as the super user: %q", got)
	}
}
