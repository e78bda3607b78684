// Command strait is the Strait broker, its mirror admin CLI and its load
// generator, in one binary.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `usage: strait <command> [arguments]

commands:
  serve     start a broker
  version   print the version
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		// The storage engine is in; the network broker is the next issue.
		fmt.Fprintln(stdout, "strait: no broker yet: the storage engine is built, the Kafka listener is not")
		return 0
	case "version":
		fmt.Fprintln(stdout, "strait (development)")
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "strait: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}
