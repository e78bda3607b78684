package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
	"github.com/strait-io/strait/raftmeta"
)

// TestClusterReassign drives `strait cluster reassign` and `decommission`
// on a 3-node Strait: a plan file executed with --wait (rollback plan and
// results in --json), --verify, --list, --cancel of a partition not being
// moved, --balance printed then executed, and decommission with
// --unregister. Strait only: kfake cannot stop one of its brokers.
func TestClusterReassign(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	tg := ctltest.Target{Name: "strait", Brokers: strings.Join(c.Addrs(), ",")}
	createOn := func(topic string, assignment ...[]int32) {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 10000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
		for i, r := range assignment {
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, kmsg.CreateTopicsRequestTopicReplicaAssignment{Partition: int32(i), Replicas: r})
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx(t), ctltest.KgoClient(t, tg))
		if err != nil || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("create %s: %v %+v", topic, err, resp)
		}
	}
	createOn("cli", []int32{1, 2})
	c.WaitForISR(t, "cli", 2, 30*time.Second)

	// Usage errors: exit 2, one line naming the problem.
	for _, args := range [][]string{
		{"cluster", "reassign"},
		{"cluster", "reassign", "--list", "--balance"},
		{"cluster", "reassign", "--verify"},
		{"cluster", "decommission", "x"},
	} {
		if r := ctltest.Run(t, tg, "", args...); r.Code != 2 {
			t.Fatalf("want a usage error\n%s", r)
		}
	}
	if r := ctltest.Run(t, tg, `{"version":2,"partitions":[]}`, "cluster", "reassign", "--plan", "-"); r.Code != 2 || !strings.Contains(r.Stderr, "version 2") {
		t.Fatalf("bad plan\n%s", r)
	}

	// A plan file, executed and waited for.
	plan := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"cli","partition":0,"replicas":[2,3]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var exec executeOutput
	decode(t, ctltest.Must(t, tg, "", "cluster", "reassign", "--plan", plan, "--wait", "--json"), &exec)
	if len(exec.Results) != 1 || exec.Results[0].Error != "NONE" || len(exec.Rollback.Partitions) != 1 ||
		!slices.Equal(exec.Rollback.Partitions[0].Replicas, []int32{1, 2}) {
		t.Fatalf("%+v", exec)
	}
	if p, _ := c.Image().Partition("cli", 0); !slices.Equal(p.Replicas, []int32{2, 3}) {
		t.Fatalf("replicas %v", p.Replicas)
	}
	r := ctltest.Must(t, tg, "", "cluster", "reassign", "--plan", plan, "--verify")
	if !containsFields(r.Stdout, "cli", "0", "[2 3]", "[2 3]", "complete") {
		t.Fatalf("%s", r)
	}
	if r := ctltest.Must(t, tg, "", "cluster", "reassign", "--list", "--json"); strings.TrimSpace(r.Stdout) != "[]" {
		t.Fatalf("moves listed after completion\n%s", r)
	}
	r = ctltest.Must(t, tg, "", "cluster", "reassign", "--plan", plan, "--cancel")
	if !strings.Contains(r.Stdout, "NO_REASSIGNMENT_IN_PROGRESS") {
		t.Fatalf("%s", r)
	}
	// The rollback plan it printed moves it back; --verify of the first
	// plan then fails.
	back := filepath.Join(t.TempDir(), "back.json")
	if err := writePlanFile(back, exec.Rollback); err != nil {
		t.Fatal(err)
	}
	ctltest.Must(t, tg, "", "cluster", "reassign", "--plan", back, "--wait")
	if r := ctltest.Run(t, tg, "", "cluster", "reassign", "--plan", plan, "--verify", "--json"); r.Code != 1 || !strings.Contains(r.Stdout, `"differs"`) {
		t.Fatalf("verify after rollback\n%s", r)
	}

	// --balance: six partitions all on 1 and 2, led by 1.
	createOn("skewed", []int32{1, 2}, []int32{1, 2}, []int32{1, 2}, []int32{1, 2}, []int32{1, 2}, []int32{1, 2})
	c.WaitForISR(t, "skewed", 2, 30*time.Second)
	r = ctltest.Must(t, tg, "", "cluster", "reassign", "--balance")
	var proposed reassignPlan
	decode(t, r, &proposed)
	if len(proposed.Partitions) == 0 {
		t.Fatalf("nothing to balance\n%s", r)
	}
	ctltest.Must(t, tg, "", "cluster", "reassign", "--balance", "--execute", "--wait", "--timeout", "60s")
	perBroker, leaders := map[int32]int{}, map[int32]int{}
	for _, p := range c.Image().Topics["skewed"].Partitions {
		leaders[p.Replicas[0]]++
		for _, id := range p.Replicas {
			perBroker[id]++
		}
	}
	if perBroker[3] == 0 || leaders[2]+leaders[3] == 0 {
		t.Fatalf("after --balance: replicas per broker %v, preferred leaders %v", perBroker, leaders)
	}
	decode(t, ctltest.Must(t, tg, "", "cluster", "reassign", "--balance"), &proposed)
	if len(proposed.Partitions) != 0 {
		t.Fatalf("still unbalanced: %+v", proposed)
	}

	// --throttle (KIP-73): the throttles are set before the move starts:
	// the rate on every broker involved, leader throttles on the current
	// replicas, follower throttles on the added one; --verify clears them
	// once the move is complete.
	before, _ := c.Image().Partition("cli", 0)
	target := []int32{1, 3}
	if slices.Equal(before.Replicas, target) {
		target = []int32{2, 3}
	}
	throttled := filepath.Join(t.TempDir(), "throttled.json")
	if err := writePlanFile(throttled, toPlan([]assignment{{Topic: "cli", Partition: 0, Replicas: target}})); err != nil {
		t.Fatal(err)
	}
	ctltest.Must(t, tg, "", "cluster", "reassign", "--plan", throttled, "--throttle", "10485760")
	th := throttlesFor([]assignment{{Topic: "cli", Partition: 0, Replicas: before.Replicas}}, []assignment{{Topic: "cli", Partition: 0, Replicas: target}})
	img := c.Image()
	if got := img.TopicConfig("cli"); got[leaderReplicasKey] != th.Leader["cli"] || got[followerReplicasKey] != th.Follower["cli"] {
		t.Fatalf("topic throttles %v, want leader %q follower %q", got, th.Leader["cli"], th.Follower["cli"])
	}
	for _, id := range th.Brokers {
		if got := img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceBroker, Name: fmt.Sprint(id)}]; got[leaderRateKey] != "10485760" || got[followerRateKey] != "10485760" {
			t.Fatalf("broker %d configs %v, want both rates 10485760", id, got)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for ctltest.Run(t, tg, "", "cluster", "reassign", "--plan", throttled, "--verify").Code != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the throttled move did not complete within 30s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	img = c.Image()
	for _, k := range []string{leaderReplicasKey, followerReplicasKey} {
		if v, ok := img.TopicConfig("cli")[k]; ok {
			t.Fatalf("%s=%s left on the topic after --verify", k, v)
		}
	}
	for _, id := range th.Brokers {
		if got := img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceBroker, Name: fmt.Sprint(id)}]; got[leaderRateKey] != "" || got[followerRateKey] != "" {
			t.Fatalf("broker %d still throttled after --verify: %v", id, got)
		}
	}

	// decommission 3: nothing left on it; stopped and unregistered, the
	// cluster no longer lists it.
	var dec decommissionOutput
	decode(t, ctltest.Must(t, tg, "", "cluster", "decommission", "3", "--json", "--timeout", "60s"), &dec)
	if !dec.Complete || len(dec.Moves) == 0 {
		t.Fatalf("%+v", dec)
	}
	for _, tp := range c.Image().Topics {
		for _, p := range tp.Partitions {
			if slices.Contains(p.Replicas, 3) {
				t.Fatalf("%s/%d still on 3: %v", tp.Name, p.Index, p.Replicas)
			}
		}
	}
	c.Stop(t, 3)
	tg.Brokers = strings.Join(c.Addrs(), ",")
	r = ctltest.Must(t, tg, "", "cluster", "decommission", "3", "--unregister")
	if !strings.Contains(r.Stdout, "unregistered") {
		t.Fatalf("%s", r)
	}
	var info clusterInfo
	decode(t, ctltest.Must(t, tg, "", "cluster", "info", "--json"), &info)
	for _, b := range info.Brokers {
		if b.ID == 3 {
			t.Fatalf("cluster info lists the unregistered broker: %+v", info)
		}
	}
}

// writePlanFile writes a plan as --plan reads it.
func writePlanFile(path string, p *reassignPlan) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return writeJSON(f, p)
}

// TestClusterReassignAnyKafka: --list and a plan that keeps a partition
// where it is work against a 1-node Strait and against kfake alike.
func TestClusterReassignAnyKafka(t *testing.T) {
	for _, tg := range ctltest.Targets(t) {
		t.Run(tg.Name, func(t *testing.T) {
			topic := ctltest.NewTopic(t, tg, 1)
			md, err := admin(t, tg).Metadata(ctx(t), topic)
			if err != nil {
				t.Fatal(err)
			}
			replicas := md.Topics[topic].Partitions[0].Replicas
			if r := ctltest.Must(t, tg, "", "cluster", "reassign", "--list", "--json"); strings.TrimSpace(r.Stdout) != "[]" {
				t.Fatalf("%s", r)
			}
			plan := fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":%s}]}`, topic, strings.ReplaceAll(fmt.Sprint(replicas), " ", ","))
			r := ctltest.Must(t, tg, plan, "cluster", "reassign", "--plan", "-", "--wait")
			if !strings.Contains(r.Stdout, "NONE") || !strings.Contains(r.Stdout, "every move is complete") {
				t.Fatalf("%s", r)
			}
			if r := ctltest.Must(t, tg, plan, "cluster", "reassign", "--plan", "-", "--verify"); !strings.Contains(r.Stdout, "complete") {
				t.Fatalf("%s", r)
			}
		})
	}
}
