package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// roles lists a quorum's replicas as id:role.
func roles(q quorumInfo) []string {
	var out []string
	for _, r := range q.Replicas {
		out = append(out, fmt.Sprintf("%d:%s", r.ID, r.Role))
	}
	slices.Sort(out)
	return out
}

// TestClusterQuorum: on a 4-node Strait (voters 1-3, node 4 an observer),
// `cluster quorum describe` shows the leader and every replica with its
// directory id and endpoint; add-voter 4 and remove-voter of the leader
// change the voters, as describe then shows; bad arguments are usage
// errors. Strait only: kfake serves no DescribeQuorum.
func TestClusterQuorum(t *testing.T) {
	c := brokertest.StartCluster(t, 4)
	tg := ctltest.Target{Name: "strait", Brokers: strings.Join(c.Addrs(), ",")}
	var q quorumInfo
	deadline := time.Now().Add(20 * time.Second)
	for {
		decode(t, ctltest.Must(t, tg, "", "cluster", "quorum", "describe", "--json"), &q)
		if r, ok := replicaOf(q, 4); ok && r.LastCaughtUpTimestamp > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	leader := q.LeaderID
	want := []string{"1:voter", "2:voter", "3:voter", "4:observer"}
	want[leader-1] = fmt.Sprintf("%d:leader", leader)
	if got := roles(q); !slices.Equal(got, want) || q.HighWatermark < 1 {
		t.Fatalf("quorum %+v: roles %v, want %v", q, got, want)
	}
	for _, r := range q.Replicas {
		if r.DirectoryID == "AAAAAAAAAAAAAAAAAAAAAA" || r.Endpoint == "" || r.Listener != "CONTROLLER" || r.LogEndOffset < 1 {
			t.Errorf("replica %+v", r)
		}
	}
	table := ctltest.Must(t, tg, "", "cluster", "quorum", "describe")
	for _, w := range []string{"LEADER", "HIGH WATERMARK", "DIRECTORY", "LAST CAUGHT UP", "observer", "leader"} {
		if !strings.Contains(table.Stdout, w) {
			t.Fatalf("table lacks %q\n%s", w, table)
		}
	}

	if r := ctltest.Must(t, tg, "", "cluster", "quorum", "add-voter", "4"); !strings.Contains(r.Stdout, "added voter 4") {
		t.Fatalf("%s", r)
	}
	if r := ctltest.Run(t, tg, "", "cluster", "quorum", "add-voter", "4"); r.Code != kit.ExitFailed || !strings.Contains(r.Stderr, "DUPLICATE_VOTER") {
		t.Fatalf("adding voter 4 again: %s", r)
	}
	if r := ctltest.Must(t, tg, "", "cluster", "quorum", "remove-voter", fmt.Sprint(leader)); !strings.Contains(r.Stdout, "removed voter") {
		t.Fatalf("%s", r)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		decode(t, ctltest.Must(t, tg, "", "cluster", "quorum", "describe", "--json"), &q)
		if r, _ := replicaOf(q, leader); r.Role == "observer" && q.LeaderID != leader || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r, _ := replicaOf(q, leader); r.Role != "observer" || q.LeaderID == leader {
		t.Fatalf("after removing %d: %+v", leader, q)
	}
	if r, _ := replicaOf(q, 4); r.Role == "observer" {
		t.Fatalf("after adding 4: %+v", q)
	}

	for _, args := range [][]string{{"quorum", "promote", "4"}, {"quorum", "add-voter"}, {"quorum", "add-voter", "x"},
		{"quorum", "remove-voter", "2", "--dir", "nope"}} {
		if r := ctltest.Run(t, tg, "", append([]string{"cluster"}, args...)...); r.Code != kit.ExitUsage {
			t.Errorf("%v: %s", args, r)
		}
	}
}
