package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/config"
)

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
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	if err := node.Stop(stopCtx); err != nil {
		fmt.Fprintf(os.Stderr, "serve stand-in: stop: %v\n", err)
		return 1
	}
	return 0
}
