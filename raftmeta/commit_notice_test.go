package raftmeta

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestCommitReachesOtherNodesAtOnce checks that a committed controller
// write reaches the other voters and the non-voter without waiting for
// raft's CommitTimeout: set to 10s here, it would otherwise hold every
// write back on the other nodes for 10s or more, since nothing else is
// written meanwhile (heartbeats of registered brokers write nothing).
func TestCommitReachesOtherNodesAtOnce(t *testing.T) {
	tc := newTestCluster(t, 3, func(c *Config) { c.CommitTimeout = 10 * time.Second })
	for id := int32(1); id <= 4; id++ {
		tc.start(id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	leader := tc.leader(5 * time.Second)
	tc.unfence(ctx, 1, 2, 3, 4)
	if err := tc.nodes[4].WaitReady(ctx); err != nil {
		t.Fatal(err)
	}

	for round := range 3 {
		name := fmt.Sprintf("notice-%d", round)
		tc.createTopic(leader, name, 2, 3)
		created := time.Now()
		waitFor(t, 2*time.Second, name+" on every node", func() bool {
			for _, q := range tc.nodes {
				if _, ok := q.Image().Topics[name]; !ok {
					return false
				}
			}
			return true
		})
		t.Logf("%s on every node %v after CreateTopics returned", name, time.Since(created).Round(time.Millisecond))
	}
}
