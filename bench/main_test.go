package bench

import (
	"context"
	"os"
	"testing"
)

// TestMain lets this test binary stand in for `strait bench` as the kfake
// child: StartKfakeProcess([os.Args[0]]) runs "<test binary> kfake-serve";
// and for `strait serve` as a cluster node: "<test binary> serve --set ...".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "kfake-serve":
			os.Exit(MainContext(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
		case "serve":
			os.Exit(serveStandIn(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}
