package bench

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// setFlags collects repeated --set key=value arguments in order.
type setFlags []string

func (s *setFlags) String() string { return strings.Join(*s, " ") }

func (s *setFlags) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q is not key=value", v)
	}
	*s = append(*s, v)
	return nil
}

// nodeFlags are the flags of the bench commands that start their own
// nodes (cluster, mirror, reassign, scale) rather than measure a --target:
// how to reach `strait serve`, what to --set on it, where the nodes keep
// their data.
type nodeFlags struct {
	serveCmd string
	sets     setFlags
	dataDir  string
	keep     bool
}

// register adds the flags to fs; nodes says whose serve the --set values
// reach ("every node's"), logs which log files --keep-data keeps.
func (n *nodeFlags) register(fs *flag.FlagSet, nodes, logs string) {
	fs.StringVar(&n.serveCmd, "serve-cmd", "", `command line reaching "strait serve", split on spaces (default: this executable + " serve")`)
	fs.Var(&n.sets, "set", "key=value passed to "+nodes+" strait serve --set; repeatable")
	fs.StringVar(&n.dataDir, "data-dir", "", "where the nodes keep their data and logs (default: a temporary directory)")
	fs.BoolVar(&n.keep, "keep-data", false, "keep the nodes' data and logs"+logs+" after the run")
}

// serveArgs is the command line reaching `strait serve` (--serve-cmd split
// on spaces; by default this executable + " serve") and where progress
// goes (nil with --quiet); code is the exit code when it fails, else -1.
func (n *nodeFlags) serveArgs(fs *flag.FlagSet, c *commonFlags, stderr io.Writer) (argv []string, progress io.Writer, code int) {
	argv = strings.Fields(n.serveCmd)
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "%s: find this executable for strait serve: %v\n", fs.Name(), err)
			return nil, nil, 1
		}
		argv = []string{exe, "serve"}
	}
	if !c.quiet {
		progress = stderr
	}
	return argv, progress, -1
}

// benchConfig is a command's configuration as its flags filled it: fill
// supplies the defaults the run would, validate names what is wrong.
type benchConfig[T any] interface {
	*T
	fill()
	validate() error
}

// checkConfig validates a copy of cfg with its defaults filled in, as the
// run will see it, and reports a problem on stderr under the command's
// name; false means exit 2, as for a bad flag.
func checkConfig[T any, P benchConfig[T]](fs *flag.FlagSet, cfg T, stderr io.Writer) bool {
	check := cfg
	P(&check).fill()
	if err := P(&check).validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return false
	}
	return true
}
