package broker_test

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestFollowerCatchesUpIntoSmallSegments: a follower's fetch returns up to
// replica.fetch.max.bytes from one of the leader's segments, which is
// larger than the follower's segment.bytes when the topic's segment.bytes
// was lowered after the leader wrote it. The follower appends such a set
// over several segments and rejoins the ISR. Before, it checked the whole
// set against segment.bytes, failed the partition with
// RECORD_LIST_TOO_LARGE ("message batch size is N bytes in append, which
// exceeds the maximum configured segment size") and never caught up.
//
// The follower is cut off from the leader (not from the controller, so it
// learns the new segment.bytes) while the leader writes about 80 KB into
// its first segment, then the config is lowered and the link healed.
func TestFollowerCatchesUpIntoSmallSegments(t *testing.T) {
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig("auto.leader.rebalance.enable=false",
		// The cut-off follower leaves the ISR soon; back in it is caught up.
		"replica.lag.time.max.ms=2000"))
	const topic = "small-segments"
	ctx := testCtx(t, time.Minute)
	ctrl := c.Controller()
	var others []int32
	for id := int32(1); id <= 3; id++ {
		if id != ctrl {
			others = append(others, id)
		}
	}
	leader, follower := others[0], others[1]
	createAssigned(ctx, t, c.Client(t), ctrl, topic, [][]int32{{leader, follower, ctrl}})
	c.WaitForISR(t, topic, 3, 15*time.Second)
	if l := c.Leader(topic, 0); l != leader {
		t.Fatalf("%s[0] led by %d, want %d (the first replica)", topic, l, leader)
	}
	c.Net.Partition([]int32{leader}, []int32{follower})

	// acks=1: nothing waits for the follower.
	cl := c.Client(t, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	for range 40 { // one 2 KB batch each: every batch fits in a segment
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(strings.Repeat(rand.Text(), 75))}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	inISR := func() bool {
		p, ok := c.Image().Partition(topic, 0)
		return ok && slices.Contains(p.ISR, follower)
	}
	c.WaitFor(t, 30*time.Second, fmt.Sprintf("node %d to leave the ISR", follower), func() bool { return !inISR() })
	seg := "8192"
	resp, err := c.Admin(t).AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.bytes", Value: &seg}}, topic)
	if err == nil {
		_, err = resp.On(topic, func(r *kadm.AlterConfigsResponse) error { return r.Err })
	}
	if err != nil {
		t.Fatalf("set segment.bytes=8192: %v", err)
	}
	c.WaitFor(t, 15*time.Second, fmt.Sprintf("node %d to know segment.bytes=8192", follower), func() bool {
		return c.Node(follower).Node().Image().TopicConfig(topic)["segment.bytes"] == seg
	})

	c.Net.Heal()
	c.WaitFor(t, 30*time.Second, fmt.Sprintf("node %d to catch up and rejoin the ISR", follower), inISR)
	if logs := c.Node(follower).Logs(); strings.Contains(logs, "RECORD_LIST_TOO_LARGE") {
		t.Fatalf("node %d refused a fetched set:\n%s", follower, logs)
	}
}
