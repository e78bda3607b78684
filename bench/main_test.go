package bench

import (
	"context"
	"os"
	"testing"
)

// TestMain lets this test binary stand in for `strait bench` as the kfake
// child: StartKfakeProcess([os.Args[0]]) runs "<test binary> kfake-serve".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "kfake-serve" {
		os.Exit(MainContext(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
