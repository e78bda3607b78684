package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// startKafkajs starts driver.js with args.
func startKafkajs(t *testing.T, ctx context.Context, args ...string) *scriptDriver {
	t.Helper()
	node, nodePath := kafkajsEnv(t)
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", "kafkajs", "driver.js")}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath, "KAFKAJS_NO_PARTITIONER_WARNING=1")
	return startScript(t, "kafkajs driver.js "+args[0], cmd)
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
		for _, cn := range nodes {
			var cluster struct {
				Brokers []struct {
					NodeID int32  `json:"nodeId"`
					Host   string `json:"host"`
					Port   int    `json:"port"`
				} `json:"brokers"`
				Controller int32 `json:"controller"`
			}
			startKafkajs(t, ctx, "cluster", cn.kafkaAddr()).once(t, &cluster)
			var got []string
			for _, b := range cluster.Brokers {
				got = append(got, fmt.Sprintf("%d@%s:%d", b.NodeID, b.Host, b.Port))
			}
			slices.Sort(got)
			c.checkDescribedCluster(t, "kafkajs", cn.id, got, cluster.Controller)
		}
	})

	t.Run("a consumer group reads what an idempotent producer wrote", func(t *testing.T) {
		const (
			topic = "kafkajs-group"
			group = "kafkajs-group"
			n     = 5000
		)
		create(t, topic)
		var res groupRead
		startKafkajs(t, ctx, "group", bootstrap, topic, group, fmt.Sprint(partitions), fmt.Sprint(n)).once(t, &res)
		c.checkGroupRead(t, ctx, res, n, partitions, group, topic)
	})

	t.Run("acknowledged records survive a leader kill", func(t *testing.T) {
		const (
			topic  = "kafkajs-kill"
			n      = 20_000
			killAt = 6_000
		)
		create(t, topic)
		c.auditLeaderKill(t, ctx, topic, n, func() *scriptDriver {
			return startKafkajs(t, ctx, "acked", bootstrap, topic, fmt.Sprint(partitions), fmt.Sprint(n), fmt.Sprint(killAt))
		})
	})
}
