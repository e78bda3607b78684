package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A node that restarts listens, and answers, before it has caught up
// with the metadata log and taken its partitions (Kafka serves no request
// before that), and a client whose metadata still names it a partition's
// leader asks it there. librdkafka (kcat, confluent-kafka-*) takes an
// UNKNOWN_TOPIC_OR_PARTITION answer to ListOffsets as final: the consumer
// hands the application "Failed to query logical offset", on which kcat
// exits. The likeliest way the kcat -G member of TestKcatAgainstACluster's
// rolling restart died at its start: a member that had just joined asks
// the first offsets of its partitions, some from node 1, the first node
// restarted. The node must answer NOT_LEADER_OR_FOLLOWER, which clients
// retry after refreshing metadata, as Kafka answers for a partition it
// does not host.
//
// The window is held open for the test: the other two nodes are frozen
// (SIGSTOP) the moment the restarted node listens, so it can neither
// register nor be unfenced, while its metadata still names it the leader
// of the partitions it led when it was killed.
func TestKcatConsumesThroughARestartingNode(t *testing.T) {
	kcatBin(t)
	// A broker session far longer than the test: the killed node stays
	// the leader of its partitions in everyone's metadata.
	c := startClientClusterSession(t, 2*time.Minute)
	nodes := c.nodes
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const (
		topic = "kcat-restarting"
		n     = 600
	)
	c.create(t, ctx, topic, 6)
	kcat(t, ctx, keyedLines("r", 0, n), "-P", "-b", c.bootstrap, "-t", topic, "-K:", "-X", "acks=all")
	restarting, frozen := nodes[0], nodes[1:]
	led := partitionsLedBy(t, ctx, restarting, topic)
	if len(led) == 0 {
		t.Fatalf("node %d leads no partition of %s", restarting.id, topic)
	}

	thawed := true
	thaw := func() {
		if !thawed {
			thawed = true
			for _, cn := range frozen {
				cn.cur.signal(syscall.SIGCONT)
			}
		}
	}
	t.Cleanup(thaw)
	// The node listens once it found the quorum, then registers and
	// waits to be unfenced before it takes its partitions: freezing the
	// other two the moment it listens holds it there. A loaded machine
	// may let it through first; then it is made the leader again and
	// restarted once more.
	for attempt := 1; ; attempt++ {
		restarting.kill()
		restarting.launch()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			if conn, err := net.Dial("tcp", restarting.kafkaAddr()); err == nil {
				for _, cn := range frozen {
					cn.cur.signal(syscall.SIGSTOP)
				}
				thawed = false
				conn.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d does not listen 30s after its restart", restarting.id)
			}
		}
		if !restarting.cur.logged(`msg="broker fencing changed"`) && slices.Equal(partitionsLedBy(t, ctx, restarting, topic), led) {
			break
		}
		if attempt == 3 {
			t.Fatalf("node %d was unfenced before the others froze, %d times", restarting.id, attempt)
		}
		thaw()
		restarting.awaitReady(30 * time.Second)
		waitUntil(t, 60*time.Second, "every partition to have 3 in-sync replicas", func() (bool, string) {
			m, err := restarting.metadata(ctx)
			if err != nil {
				return false, err.Error()
			}
			_, problems := notFullyReplicated(m, 3)
			return problems == "", problems
		})
		if _, err := c.adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, 30*time.Second, fmt.Sprintf("node %d to lead %v again", restarting.id, led), func() (bool, string) {
			got := partitionsLedBy(t, ctx, restarting, topic)
			return slices.Equal(got, led), fmt.Sprint(got)
		})
	}
	// What librdkafka asks it: the first offset of a partition it led.
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version, lo.ReplicaID = 5, -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.CurrentLeaderEpoch, lp.Timestamp = led[0], -1, -2
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	resp, err := restarting.request(ctx, lo)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Errorf("ListOffsets (earliest) of %s-%d on the restarting node: error %v, want NOT_LEADER_OR_FOLLOWER", topic, led[0], kerr.ErrorForCode(code))
	}

	// kcat reading the topic from the beginning, bootstrapped from the
	// restarting node alone, must wait for the cluster, not give up.
	cmd := exec.CommandContext(ctx, kcatBin(t), "-C", "-b", restarting.kafkaAddr(), "-t", topic, "-o", "beginning", "-e", "-q", "-J")
	var (
		mu          sync.Mutex
		out, errOut bytes.Buffer
	)
	cmd.Stdout, cmd.Stderr = lockedWriter{&mu, &out}, lockedWriter{&mu, &errOut}
	stderr := func() string {
		mu.Lock()
		defer mu.Unlock()
		return errOut.String()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	select {
	case err := <-exited:
		t.Fatalf("kcat exited while node %d was restarting: %v\n%s", restarting.id, err, stderr())
	case <-time.After(5 * time.Second):
	}

	thaw()
	restarting.awaitReady(60 * time.Second)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("kcat: %v\n%s", err, stderr())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("kcat did not read to the end within 60s of the cluster's return\n%s", stderr())
	}
	// kcat exited: nothing writes out any more.
	if got := len(decodeKcatMessages(t, out.String())); got != n {
		t.Fatalf("kcat read %d messages, want %d\n%s", got, n, stderr())
	}
}

// partitionsLedBy lists the partitions of topic that cn leads, by its own
// metadata.
func partitionsLedBy(t *testing.T, ctx context.Context, cn *clusterNode, topic string) []int32 {
	t.Helper()
	var m *kmsg.MetadataResponse
	waitUntil(t, 10*time.Second, fmt.Sprintf("metadata from node %d", cn.id), func() (bool, string) {
		var err error
		m, err = cn.metadata(ctx) // a first request after a restart may meet the old connection
		return err == nil, fmt.Sprint(err)
	})
	var led []int32
	for _, p := range partitions(m) {
		if p.topic == topic && p.leader == cn.id {
			led = append(led, p.partition)
		}
	}
	return led
}

// logged reports whether the process has logged a line containing s.
func (p *proc) logged(s string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.ContainsFunc(p.lines, func(l string) bool { return strings.Contains(l, s) })
}
