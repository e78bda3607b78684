package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
	testScriptedClient(t, "kafkajs", startKafkajs)
}
