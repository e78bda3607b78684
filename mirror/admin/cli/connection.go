package cli

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Connection is how a command reaches the destination cluster.
type Connection struct {
	Brokers []string
	// Opts are franz-go options: TLS, SASL, client id (after the CLI's
	// own client id, so they win).
	Opts []kgo.Opt
}

// Options let the caller own the connection flags: cmd/strait gives
// `strait mirror` the connection every client command takes (--brokers,
// -X, --command-config, --profile: TLS and SASL to the destination)
// without this package importing cmd/, which is above it. The zero
// Options is the plaintext --bootstrap-server connection.
type Options struct {
	// Flags registers the connection flags on a flag set; it is called for
	// the flags before the command and again for the command's own, so
	// the flags go in either place (register with the current values as
	// defaults, as a repeated -X must append). The caller keeps
	// --bootstrap-server as an alias of its broker flag.
	Flags func(fs *flag.FlagSet)
	// Connect resolves the parsed flags; an error is a usage error naming
	// the setting at fault.
	Connect func() (Connection, error)
	// FlagsHelp is the connection flags' part of `strait mirror --help`.
	FlagsHelp string
}

// usage is Usage with the caller's connection flags.
func (o Options) usage() string {
	if o.FlagsHelp == "" {
		return Usage
	}
	return strings.Replace(Usage, connectionHelp, o.FlagsHelp, 1)
}

// connection is the parsed flags' Connection.
func (g *globals) connection() (Connection, error) {
	if g.opts.Connect != nil {
		return g.opts.Connect()
	}
	bootstrap, err := parseHostPorts(g.bootstrap)
	if err != nil {
		return Connection{}, fmt.Errorf("--bootstrap-server: %v", err)
	}
	return Connection{Brokers: bootstrap}, nil
}

// CommandFlags is each command's flag set (the global flags included)
// with opts' connection flags, by command name: for shell completion.
func CommandFlags(opts Options) map[string]*flag.FlagSet {
	out := make(map[string]*flag.FlagSet, len(commands))
	for name, cmd := range commands {
		g := globals{opts: opts}
		fs := flag.NewFlagSet("strait mirror "+name, flag.ContinueOnError)
		g.register(fs)
		cmd.flags(fs)
		out[name] = fs
	}
	return out
}

// CommandNames are the commands, sorted.
func CommandNames() []string { return slices.Sorted(maps.Keys(commands)) }
