package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
)

// kafka-python, the pure-Python client (Debian's python3-kafka 2.0.2;
// `make test` installs it), against three strait binaries. It has its own
// protocol code and picks request versions from the broker version it
// infers from ApiVersions; against Strait (which it takes for Kafka 2.5)
// it sends Produce v7, Fetch v4 (the oldest Strait serves, as Kafka 4
// does), JoinGroup v2 and OffsetCommit v2, older versions than the other
// clients send. Its scenarios are in testdata/kafkapython/driver.py.

// kafkaPython returns a Python interpreter that imports kafka-python, or
// skips the test loudly. Debian's package installs into the system
// interpreter's dist-packages, which a python3 earlier on PATH (pyenv, a
// virtualenv) does not see, so that one is tried first.
func kafkaPython(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	for _, py := range candidates {
		if exec.Command(py, "-c", "import kafka").Run() == nil {
			return py
		}
	}
	t.Skip("*** kafka-python is not installed: SKIPPING the kafka-python tests; `make test` installs Debian's python3-kafka, or run `apt-get install python3-kafka` ***")
	return ""
}

// startKafkaPython starts driver.py with args.
func startKafkaPython(t *testing.T, ctx context.Context, args ...string) *scriptDriver {
	t.Helper()
	cmd := exec.CommandContext(ctx, kafkaPython(t), append([]string{filepath.Join("testdata", "kafkapython", "driver.py")}, args...)...)
	return startScript(t, "kafka-python driver.py "+args[0], cmd)
}

func TestKafkaPythonAgainstACluster(t *testing.T) {
	kafkaPython(t)
	testScriptedClient(t, "kafkapython", startKafkaPython)
}
