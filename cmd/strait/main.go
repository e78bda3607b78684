// Command strait is the Strait broker, its mirror admin CLI and its load
// generator, in one binary.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/strait-io/strait/bench"
	"github.com/strait-io/strait/cmd/strait/ctl"
	"github.com/strait-io/strait/cmd/strait/ctl/kit"
	mirrorcli "github.com/strait-io/strait/mirror/admin/cli"
	"github.com/strait-io/strait/wire/sysmem"
)

const usage = `usage: strait <command> [arguments]

commands:
  serve      start a broker
  mirror     manage cluster mirrors (create, start, stop, describe, ...)
  bench      run a load-generator workload (produce, consume, e2e, cluster, mirror, limits)
  version    print the version
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		// First, before any signal is caught: it may replace the
		// process (sysmon.go).
		keepSysmonAwake()
	}
	// SIGINT and SIGTERM end the context: serve stops gracefully.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "serve":
			setServeGCPercent(os.Getenv)
			setServeMemoryLimit(os.Getenv, sysmem.CgroupLimit)
		case "bench":
			// The load generator collects as seldom as the broker, so
			// that a row measures brokers rather than its own collector:
			// a franz-go producer to 10,000 partitions builds requests of
			// tens of MiB, and at GOGC=100 the bench process spent more
			// of the two cores faulting those buffers' pages back in than
			// the broker spent on the requests (bench scale's produce to
			// every partition: 280-325 MiB/s, against 370-430 at 400;
			// the 1- and 8-partition rows did not move). Both brokers of
			// a run face the same client.
			setServeGCPercent(os.Getenv)
		}
	}
	code := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText())
		return 2
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "bench":
		return bench.MainContext(ctx, args[1:], stdout, stderr)
	case "mirror":
		env := kit.Env{Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
		return mirrorcli.MainWith(ctx, args[1:], stdout, stderr, ctl.MirrorOptions(env))
	case "version":
		fmt.Fprintln(stdout, "strait (development)")
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usageText())
		return 0
	}
	for _, g := range ctl.Groups() {
		if g.Name == args[0] {
			return kit.Main(ctx, g, args[1:], kit.Env{Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv})
		}
	}
	fmt.Fprintf(stderr, "strait: unknown command %q\n\n%s", args[0], usageText())
	return 2
}

// usageText is the usage with the client command groups listed.
func usageText() string {
	var b strings.Builder
	b.WriteString(usage)
	for _, g := range ctl.Groups() {
		fmt.Fprintf(&b, "  %-10s %s\n", g.Name, g.Summary)
	}
	return b.String()
}
