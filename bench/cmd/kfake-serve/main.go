// Command kfake-serve runs franz-go's kfake for `strait bench --peer
// kfake`, which starts it as a child process so that its CPU and memory
// are measured from /proc exactly as a strait broker's are. It is its own
// program so that kfake stays out of the shipped strait binary.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/strait-io/strait/bench/kfakepeer"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := kfakepeer.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
