package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// kafkajs, the Node.js client, against three strait binaries. Its
// scenarios are in testdata/kafkajs/driver.js, which prints results as
// JSON lines; this file starts the cluster, answers the driver and judges.
//
// kafkajs comes from the npm registry, which `make test` may not reach (it
// uses only the Go module proxy and Debian's packages), so `make test-long`
// installs it into .cache/kafkajs and this test skips loudly without it.

// kafkajsEnv returns node's path and the NODE_PATH that finds kafkajs, or
// skips the test loudly.
func kafkajsEnv(t *testing.T) (node, nodePath string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("*** node is not installed: SKIPPING the kafkajs tests; install Node.js and run `make test-long` ***")
	}
	dir := os.Getenv("STRAIT_KAFKAJS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", ".cache", "kafkajs")
	}
	modules, err := filepath.Abs(filepath.Join(dir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "kafkajs", "package.json")); err != nil {
		t.Skipf("*** kafkajs is not installed in %s: SKIPPING the kafkajs tests; `make test-long` installs it with npm ***", dir)
	}
	return node, modules
}

// kafkajsDriver is one run of driver.js.
type kafkajsDriver struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr bytes.Buffer
}

func startKafkajs(t *testing.T, ctx context.Context, args ...string) *kafkajsDriver {
	t.Helper()
	node, nodePath := kafkajsEnv(t)
	d := &kafkajsDriver{cmd: exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", "kafkajs", "driver.js")}, args...)...)}
	d.cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath, "KAFKAJS_NO_PARTITIONER_WARNING=1")
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
func (d *kafkajsDriver) next(t *testing.T, v any) bool {
	t.Helper()
	if !d.lines.Scan() {
		return false
	}
	if err := json.Unmarshal(d.lines.Bytes(), v); err != nil {
		t.Fatalf("driver.js printed %q: %v", d.lines.Text(), err)
	}
	return true
}

// wait fails the test unless the driver exited cleanly.
func (d *kafkajsDriver) wait(t *testing.T) {
	t.Helper()
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("driver.js %s: %v\n%s", strings.Join(d.cmd.Args[2:], " "), err, tail(d.stderr.String(), 2000))
	}
}

// runKafkajs runs one scenario that prints a single result into v.
func runKafkajs(t *testing.T, ctx context.Context, v any, args ...string) {
	t.Helper()
	d := startKafkajs(t, ctx, args...)
	got := d.next(t, v)
	d.wait(t)
	if !got {
		t.Fatalf("driver.js %s printed nothing", strings.Join(args, " "))
	}
}

func TestKafkajsAgainstACluster(t *testing.T) {
	kafkajsEnv(t)
	c := startClientCluster(t)
	nodes, bootstrap := c.nodes, c.bootstrap
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const partitions = 6
	create := func(t *testing.T, topic string) { t.Helper(); c.create(t, ctx, topic, partitions) }

	t.Run("the cluster from any node lists every broker", func(t *testing.T) {
		want := c.brokers()
		for _, cn := range nodes {
			var cluster struct {
				Brokers []struct {
					NodeID int32  `json:"nodeId"`
					Host   string `json:"host"`
					Port   int    `json:"port"`
				} `json:"brokers"`
				Controller int32 `json:"controller"`
			}
			runKafkajs(t, ctx, &cluster, "cluster", cn.kafkaAddr())
			var got []string
			for _, b := range cluster.Brokers {
				got = append(got, fmt.Sprintf("%d@%s:%d", b.NodeID, b.Host, b.Port))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) || cluster.Controller < 1 || cluster.Controller > 3 {
				t.Fatalf("bootstrapped from node %d, kafkajs sees brokers %v and controller %d, want %v", cn.id, got, cluster.Controller, want)
			}
		}
	})

	t.Run("a consumer group reads what an idempotent producer wrote", func(t *testing.T) {
		const (
			topic = "kafkajs-group"
			group = "kafkajs-group"
			n     = 5000
		)
		create(t, topic)
		var res struct {
			Distinct   int       `json:"distinct"`
			Deliveries int       `json:"deliveries"`
			Bad        int       `json:"bad"`
			Members    [][]int32 `json:"members"`
		}
		runKafkajs(t, ctx, &res, "group", bootstrap, topic, group, fmt.Sprint(partitions), fmt.Sprint(n))
		if res.Distinct != n || res.Deliveries != n || res.Bad != 0 {
			t.Fatalf("the group read %d distinct records in %d deliveries, %d with a wrong key or header; want %d once each", res.Distinct, res.Deliveries, res.Bad, n)
		}
		if len(res.Members) != 2 || len(res.Members[0]) == 0 || len(res.Members[1]) == 0 ||
			len(res.Members[0])+len(res.Members[1]) != partitions {
			t.Fatalf("the members read partitions %v: want the %d split between both", res.Members, partitions)
		}
		c.checkCommittedAtEnd(t, ctx, group, topic)
		t.Logf("members read partitions %v and %v; committed offsets at the end of every partition", res.Members[0], res.Members[1])
	})

	t.Run("acknowledged records survive a leader kill", func(t *testing.T) {
		const (
			topic  = "kafkajs-kill"
			n      = 20_000
			killAt = 6_000
		)
		create(t, topic)
		victim, survivors := c.leaderOf(t, ctx, topic)
		start := time.Now()
		d := startKafkajs(t, ctx, "acked", bootstrap, topic, fmt.Sprint(partitions), fmt.Sprint(n), fmt.Sprint(killAt))
		acked := map[int]stored{}
		var failed []string
		for {
			var line struct {
				Event      string `json:"event"`
				First      int    `json:"first"`
				Count      int    `json:"count"`
				Partition  int32  `json:"partition"`
				BaseOffset int64  `json:"baseOffset"`
				Error      string `json:"error"`
			}
			if !d.next(t, &line) {
				break
			}
			switch {
			case line.Event == "kill":
				victim.kill()
				t.Logf("%v: SIGKILLed node %d, leader of %s/0, after %d records", time.Since(start).Round(time.Millisecond), victim.id, topic, killAt)
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
			t.Fatalf("kafkajs failed %d sends: %s", len(failed), strings.Join(failed, "; "))
		}
		t.Logf("kafkajs had %d records acknowledged in %v", len(acked), time.Since(start).Round(time.Millisecond))
		log, ends := readAll(t, survivors[0], topic)
		a, problems := check(acked, log, ends)
		t.Logf("leader kill under kafkajs: %v", a)
		if a.acked != n || a.lost != 0 || a.duplicates != 0 || a.unacked != 0 || a.gaps != 0 {
			t.Fatalf("audit %v:\n%s", a, strings.Join(problems, "\n"))
		}
	})
}
