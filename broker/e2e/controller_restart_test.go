package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// restartToServingBound is how soon a restarted node of an idle cluster
// must serve: its Metadata names the active controller and a write
// forwarded through it succeeds.
const restartToServingBound = 5 * time.Second

// TestRestartedControllerServesSoon SIGKILLs the active controller of an
// idle three-node cluster and restarts it, twice: at once (a supervisor
// restarting a crashed process, before the others elect a new
// controller), then after the others elected one. Each time it measures
// from the process start until the node serves: its Metadata names a
// controller and a CreateTopics through it succeeds.
func TestRestartedControllerServesSoon(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodes := newClusterNodes(t, 3)
	for _, cn := range nodes {
		cn.launch()
	}
	for _, cn := range nodes {
		cn.awaitReady(60 * time.Second)
	}
	controllerOf := func(cn *clusterNode) int32 {
		m, err := cn.metadata(ctx)
		if err != nil {
			return -1
		}
		return m.ControllerID
	}
	activeController := func() *clusterNode {
		var c int32
		waitUntil(t, 30*time.Second, "node 1 to name the active controller", func() (bool, string) {
			c = controllerOf(nodes[0])
			return c > 0, ""
		})
		return nodes[c-1]
	}
	topics := 0
	restart := func(victim *clusterNode, how string) {
		started := time.Now()
		victim.launch()
		var named time.Duration
		for {
			if time.Since(started) > 30*time.Second {
				t.Fatalf("node %d did not serve within 30s of its restart", victim.id)
			}
			if named == 0 && controllerOf(victim) > 0 {
				named = time.Since(started)
			}
			if named > 0 {
				topics++
				if createThrough(ctx, victim, fmt.Sprintf("after-restart-%d", topics)) == nil {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		serving := time.Since(started)
		t.Logf("node %d, the killed controller, restarted %s: names a controller after %v, serves a forwarded write after %v",
			victim.id, how, named.Round(time.Millisecond), serving.Round(time.Millisecond))
		if serving > restartToServingBound {
			t.Errorf("node %d restarted %s served after %v, want under %v", victim.id, how, serving.Round(time.Millisecond), restartToServingBound)
		}
	}

	victim := activeController()
	victim.kill()
	restart(victim, "at once")

	victim = activeController()
	victim.kill()
	other := nodes[victim.id%3]
	waitUntil(t, 30*time.Second, "another active controller", func() (bool, string) {
		c := controllerOf(other)
		return c > 0 && c != victim.id, fmt.Sprint("controller ", c)
	})
	restart(victim, "after a new election")
}

// createThrough creates a one-partition topic through cn.
func createThrough(ctx context.Context, cn *clusterNode, topic string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, 1, 3
	req.Topics = append(req.Topics, ct)
	req.TimeoutMillis = 2000
	resp, err := cn.request(ctx, req)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode)
}
