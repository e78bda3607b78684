package cluster

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/cmd/strait/ctl/ctltest"
)

// TestClusterHealthBrokerDown: on a 3-node Strait, a stopped broker
// makes its replicas under-replicated, the partitions it alone held
// offline and leaderless, and the broker down (exit 1, named in --json); once it is back and caught up the cluster is healthy again.
// Strait only: kfake cannot stop one of its brokers.
func TestClusterHealthBrokerDown(t *testing.T) {
	c := brokertest.StartCluster(t, 3)
	tg := ctltest.Target{Name: "strait", Brokers: strings.Join(c.Addrs(), ",")}
	if _, err := admin(t, tg).CreateTopic(ctx(t), 2, 3, nil, "down"); err != nil {
		t.Fatal(err)
	}
	c.WaitForISR(t, "down", 3, 30*time.Second)
	// One partition of an unreplicated topic lives on broker 3 alone: it
	// goes offline with it.
	if _, err := admin(t, tg).CreateTopic(ctx(t), 3, 1, nil, "solo"); err != nil {
		t.Fatal(err)
	}
	md, err := admin(t, tg).Metadata(ctx(t), "solo")
	if err != nil {
		t.Fatal(err)
	}
	var onThree []string
	for _, p := range md.Topics["solo"].Partitions.Sorted() {
		if p.Replicas[0] == 3 {
			onThree = append(onThree, fmt.Sprintf("solo/%d", p.Partition))
		}
	}
	var h health
	waitHealth(t, tg, 0, &h, func() bool { return true })

	c.Stop(t, 3)
	tg.Brokers = strings.Join(c.Addrs(), ",")
	waitHealth(t, tg, 1, &h, func() bool { return len(h.UnderReplicated) == 2 })
	if h.Healthy || strings.Join(ids(h.BrokersDown), ",") != "3" || strings.Join(ids(h.Brokers), ",") != "1,2" ||
		strings.Join(h.UnderReplicated, ",") != "down/0,down/1" || strings.Join(h.Leaderless, ",") != strings.Join(onThree, ",") ||
		strings.Join(h.Offline, ",") != strings.Join(onThree, ",") || len(onThree) == 0 ||
		strings.Join(h.UnhealthyReasons, ",") != "brokers_down,offline_partitions,leaderless_partitions,under_replicated_partitions" {
		t.Fatalf("%+v", h)
	}

	c.Restart(t, 3)
	tg.Brokers = strings.Join(c.Addrs(), ",")
	r := ctltest.Must(t, tg, "", "cluster", "health", "--wait", "--timeout", "60s")
	if !containsFields(r.Stdout, "HEALTHY", "true") {
		t.Fatalf("%s", r)
	}
}

// waitHealth runs cluster health --json until it exits code and done
// holds (60 s at most).
func waitHealth(t *testing.T, tg ctltest.Target, code int, h *health, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := ctltest.Run(t, tg, "", "cluster", "health", "--json")
		*h = health{}
		err := json.Unmarshal([]byte(r.Stdout), h)
		if err == nil && r.Code == code && done() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no health with exit %d: %v\n%s", code, err, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
