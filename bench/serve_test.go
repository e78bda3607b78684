package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/config"
)

// standInHaltAfter, set in the environment to DURATION:TEXT, makes a serve
// stand-in one of whose --set arguments contains TEXT exit that long after
// it is ready, without stopping.
const standInHaltAfter = "STRAIT_BENCH_STANDIN_HALT_AFTER"

// haltAfter reads standInHaltAfter's value for a node with these sets.
func haltAfter(v string, sets []string) (time.Duration, bool) {
	dur, text, ok := strings.Cut(v, ":")
	d, err := time.ParseDuration(dur)
	if !ok || err != nil || !slices.ContainsFunc(sets, func(s string) bool { return strings.Contains(s, text) }) {
		return 0, false
	}
	return d, true
}

// serveStandIn is `strait serve --set k=v ...` for the cluster tests: the
// same configuration loading and broker.Node as cmd/strait's serve (which
// this package cannot import), logging the same ready line, stopping
// gracefully on SIGTERM. It spares the tests a build of the binary.
func serveStandIn(args []string) int {
	var sets []string
	for i := 0; i < len(args); i++ {
		if args[i] != "--set" || i+1 == len(args) {
			fmt.Fprintf(os.Stderr, "serve stand-in: unexpected argument %q\n", args[i])
			return 2
		}
		i++
		sets = append(sets, args[i])
	}
	cfg, err := config.Load("", sets)
	if err != nil {
		fmt.Fprintf(os.Stderr, "serve stand-in: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	node := broker.NewNode(cfg, broker.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err := node.Start(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "serve stand-in: %v\n", err)
		return 1
	}
	if d, ok := haltAfter(os.Getenv(standInHaltAfter), sets); ok {
		// A node halting under the bench, as one whose log directory
		// failed does (TestClusterNodeExits).
		select {
		case <-time.After(d):
			fmt.Fprintln(os.Stderr, "serve stand-in: halting as told by "+standInHaltAfter)
			os.Exit(1)
		case <-ctx.Done():
		}
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if err := node.Stop(stopCtx); err != nil {
		fmt.Fprintf(os.Stderr, "serve stand-in: stop: %v\n", err)
		return 1
	}
	return 0
}
