package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// scriptDriver is one run of a client library's driver script (kafkajs's
// driver.js, kafka-python's driver.py): the script runs one scenario and
// prints its results as JSON lines, and the Go test answers and judges.
type scriptDriver struct {
	name   string // for messages: "driver.js acked"
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr bytes.Buffer
}

// startScript starts cmd as a driver, killed at the end of the test.
func startScript(t *testing.T, name string, cmd *exec.Cmd) *scriptDriver {
	t.Helper()
	d := &scriptDriver{name: name, cmd: cmd}
	d.cmd.Stderr = &d.stderr
	var err error
	if d.stdin, err = d.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d.lines = bufio.NewScanner(out)
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.cmd.Process.Kill(); _ = d.cmd.Wait() })
	return d
}

// next decodes the driver's next line into v; false at its end.
func (d *scriptDriver) next(t *testing.T, v any) bool {
	t.Helper()
	if !d.lines.Scan() {
		return false
	}
	if err := json.Unmarshal(d.lines.Bytes(), v); err != nil {
		t.Fatalf("%s printed %q: %v", d.name, d.lines.Text(), err)
	}
	return true
}

// wait fails the test unless the driver exited cleanly.
func (d *scriptDriver) wait(t *testing.T) {
	t.Helper()
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("%s: %v\n%s", d.name, err, tail(d.stderr.String(), 2000))
	}
}

// once waits for a driver that prints a single result into v.
func (d *scriptDriver) once(t *testing.T, v any) {
	t.Helper()
	got := d.next(t, v)
	d.wait(t)
	if !got {
		t.Fatalf("%s printed nothing", d.name)
	}
}

// checkClusterFromEveryNode runs a driver's "cluster" scenario
// bootstrapped from each node in turn and fails the test unless the client
// lists exactly the cluster's brokers and a controller among them. The
// driver prints {"brokers":[{"nodeId","host","port"}...],"controller"},
// the shape of kafkajs's describeCluster.
func (c *clientCluster) checkClusterFromEveryNode(t *testing.T, start func(addr string) *scriptDriver) {
	t.Helper()
	want := c.brokers()
	for _, cn := range c.nodes {
		var cluster struct {
			Brokers []struct {
				NodeID int32  `json:"nodeId"`
				Host   string `json:"host"`
				Port   int    `json:"port"`
			} `json:"brokers"`
			Controller int32 `json:"controller"`
		}
		d := start(cn.kafkaAddr())
		d.once(t, &cluster)
		var got []string
		for _, b := range cluster.Brokers {
			got = append(got, fmt.Sprintf("%d@%s:%d", b.NodeID, b.Host, b.Port))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) || cluster.Controller < 1 || int(cluster.Controller) > len(c.nodes) {
			t.Fatalf("bootstrapped from node %d, %s sees brokers %v and controller %d, want %v", cn.id, d.name, got, cluster.Controller, want)
		}
	}
}

// groupRead is what a driver's "group" scenario reports: the distinct
// records its two members read, in how many deliveries, how many with a
// wrong key or header, and the partitions each member read from.
type groupRead struct {
	Distinct   int       `json:"distinct"`
	Deliveries int       `json:"deliveries"`
	Bad        int       `json:"bad"`
	Members    [][]int32 `json:"members"`
}

// checkGroupRead fails the test unless the group read each of the n
// records once, intact, with both members sharing the partitions, and
// committed the end of every partition of topic.
func (c *clientCluster) checkGroupRead(t *testing.T, ctx context.Context, res groupRead, n, partitions int, group, topic string) {
	t.Helper()
	if res.Distinct != n || res.Deliveries != n || res.Bad != 0 {
		t.Fatalf("the group read %d distinct records in %d deliveries, %d with a wrong key or header; want %d once each", res.Distinct, res.Deliveries, res.Bad, n)
	}
	if len(res.Members) != 2 || len(res.Members[0]) == 0 || len(res.Members[1]) == 0 ||
		len(res.Members[0])+len(res.Members[1]) != partitions {
		t.Fatalf("the members read partitions %v: want the %d split between both", res.Members, partitions)
	}
	c.checkCommittedAtEnd(t, ctx, group, topic)
	t.Logf("members read partitions %v and %v; committed offsets at the end of every partition", res.Members[0], res.Members[1])
}

// ackedLine is one line of a driver's "acked" scenario: the kill request
// ({"event":"kill"}), the end ({"event":"done"}), or records first to
// first+count-1 acknowledged at partition and baseOffset onward, or failed.
type ackedLine struct {
	Event      string `json:"event"`
	First      int    `json:"first"`
	Count      int    `json:"count"`
	Partition  int32  `json:"partition"`
	BaseOffset int64  `json:"baseOffset"`
	Error      string `json:"error"`
}

// auditLeaderKill runs a driver's "acked" scenario against topic, n
// records: when the driver asks, it SIGKILLs the leader of topic/0 and
// tells the driver, then it reads the topic from a survivor and fails the
// test unless every acknowledged record is where the broker said, and
// nothing was lost, duplicated, written unacknowledged or skipped.
func (c *clientCluster) auditLeaderKill(t *testing.T, ctx context.Context, topic string, n int, start func() *scriptDriver) {
	t.Helper()
	victim, survivors := c.leaderOf(t, ctx, topic)
	began := time.Now()
	d := start()
	acked := map[int]stored{}
	var failed []string
	for {
		var line ackedLine
		if !d.next(t, &line) {
			break
		}
		switch {
		case line.Event == "kill":
			victim.kill()
			t.Logf("%v: SIGKILLed node %d, leader of %s/0", time.Since(began).Round(time.Millisecond), victim.id, topic)
			if _, err := io.WriteString(d.stdin, "killed\n"); err != nil {
				t.Fatal(err)
			}
		case line.Error != "":
			failed = append(failed, fmt.Sprintf("records %d-%d: %s", line.First, line.First+line.Count-1, line.Error))
		case line.Event == "":
			for k := range line.Count {
				i := line.First + k
				acked[i] = stored{line.Partition, line.BaseOffset + int64(k), recordKey(i), recordValue(i)}
			}
		}
	}
	d.wait(t)
	if len(failed) > 0 {
		t.Fatalf("%s failed %d sends: %s", d.name, len(failed), strings.Join(failed, "; "))
	}
	t.Logf("%d records acknowledged in %v", len(acked), time.Since(began).Round(time.Millisecond))
	log, ends := readAll(t, survivors[0], topic)
	a, problems := check(acked, log, ends)
	t.Logf("leader kill under %s: %v", d.name, a)
	if a.acked != n || a.lost != 0 || a.duplicates != 0 || a.unacked != 0 || a.gaps != 0 {
		t.Fatalf("audit %v:\n%s", a, strings.Join(problems, "\n"))
	}
}

// testScriptedClient runs the scenarios every scripted client's driver
// implements against a fresh three-node cluster; topics are named after
// prefix. start runs the driver with a scenario's arguments.
func testScriptedClient(t *testing.T, prefix string, start func(t *testing.T, ctx context.Context, args ...string) *scriptDriver) {
	c := startClientCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const partitions = 6

	t.Run("the cluster from any node lists every broker", func(t *testing.T) {
		c.checkClusterFromEveryNode(t, func(addr string) *scriptDriver { return start(t, ctx, "cluster", addr) })
	})

	t.Run("a consumer group reads what an acks=all producer wrote", func(t *testing.T) {
		const n = 5000
		topic, group := prefix+"-group", prefix+"-group"
		c.create(t, ctx, topic, partitions)
		var res groupRead
		start(t, ctx, "group", c.bootstrap, topic, group, fmt.Sprint(partitions), fmt.Sprint(n)).once(t, &res)
		c.checkGroupRead(t, ctx, res, n, partitions, group, topic)
	})

	t.Run("acknowledged records survive a leader kill", func(t *testing.T) {
		const (
			n      = 20_000
			killAt = 6_000
		)
		topic := prefix + "-kill"
		c.create(t, ctx, topic, partitions)
		c.auditLeaderKill(t, ctx, topic, n, func() *scriptDriver {
			return start(t, ctx, "acked", c.bootstrap, topic, fmt.Sprint(partitions), fmt.Sprint(n), fmt.Sprint(killAt))
		})
	})
}
