package bench

import (
	"context"
	"os"
	"testing"

	"github.com/strait-io/strait/bench/kfakepeer"
)

// TestMain lets this test binary stand in for the kfake-serve program:
// StartKfakeProcess([os.Args[0], "kfake-serve"]) runs "<test binary>
// kfake-serve --brokers ..."; and for `strait serve` as a cluster node:
// "<test binary> serve --set ...".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "kfake-serve":
			os.Exit(kfakepeer.Main(context.Background(), os.Args[2:], os.Stdout, os.Stderr))
		case "serve":
			os.Exit(serveStandIn(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}
