package broker_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestRestartedNodeLeadsNothingBeforeCatchingUp: a partition leader is
// killed and started again before the controller fences it. Its
// re-registration fences it and its partitions move (Kafka fences a new
// incarnation until it catches up); before that record reached it, its
// metadata still named it leader at the old epoch. As Kafka starts its
// ReplicaManager only after the initial catch-up, the restarted node
// takes its replicas' state from the image it has once unfenced, and
// never leads at the epoch it had before the kill: there it would
// acknowledge acks=1 writes that the new leader's epoch then truncates.
// Before, its replicas took the first image raft gave it, and it logged
// itself leader at the old epoch on every such restart.
//
// Only the restarted incarnation's lines count: the node logs what each
// incarnation does into one buffer, and the first one publishes an image
// before its replicas apply it, so on a busy machine its own "leader"
// line for the new topic could come after the test had looked at the
// image (and once came even after the test had noted how much was logged,
// which failed the test on the first incarnation's line). So the test
// waits for that line before the kill and reads only what follows the
// crash line: Abandon logs that last, once raft's goroutine, which applies
// the metadata to the replicas, is done.
func TestRestartedNodeLeadsNothingBeforeCatchingUp(t *testing.T) {
	c := brokertest.StartCluster(t, 3,
		// Long enough that the controller does not fence the killed
		// node before it is back: its re-registration does.
		brokertest.WithConfig("broker.session.timeout.ms=20000", "auto.leader.rebalance.enable=false"))
	const topic = "catch-up"
	createReplicatedTopic(t, c.Admin(t), topic, 1, 3)
	c.WaitForISR(t, topic, 3, 15*time.Second)
	victim := c.Leader(topic, 0)
	epoch := c.Image().Topics[topic].Partitions[0].LeaderEpoch
	stale := fmt.Sprintf("partition=%s-0 leaderEpoch=%d", topic, epoch)
	ledAtEpoch := func(line string) bool {
		return strings.Contains(line, "msg=leader ") && strings.Contains(line, stale)
	}
	c.WaitFor(t, 15*time.Second, fmt.Sprintf("node %d to lead %s[0] at epoch %d", victim, topic, epoch), func() bool {
		return slices.ContainsFunc(strings.Split(c.Node(victim).Logs(), "\n"), ledAtEpoch)
	})

	c.Kill(t, victim)
	c.Restart(t, victim)
	c.WaitForISR(t, topic, 3, 30*time.Second)

	logs := c.Node(victim).Logs()
	crash := strings.LastIndex(logs, crashLine)
	if crash < 0 {
		t.Fatalf("node %d's log lost its crash line %q: cannot tell what the restarted node logged", victim, crashLine)
	}
	for _, line := range strings.Split(logs[crash:], "\n") {
		if ledAtEpoch(line) {
			t.Fatalf("node %d, restarted, led %s[0] at epoch %d again before catching up:\n%s", victim, topic, epoch, line)
		}
	}
	now := c.Image().Topics[topic].Partitions[0]
	t.Logf("node %d restarted; %s[0] led by %d at epoch %d (was %d)", victim, topic, now.Leader, now.LeaderEpoch, epoch)
	if now.LeaderEpoch <= epoch {
		t.Fatalf("%s[0] is at epoch %d after its leader's re-registration, want above %d", topic, now.LeaderEpoch, epoch)
	}
}

// crashLine is the last line Node.Abandon logs.
const crashLine = "msg=\"strait broker abandoned (simulated crash)\""
