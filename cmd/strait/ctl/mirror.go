package ctl

import (
	"flag"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
	mirrorcli "github.com/strait-io/strait/mirror/admin/cli"
)

// MirrorOptions give `strait mirror` the connection of every client
// command (--brokers, -X, --command-config, --profile, --config-file:
// TLS and SASL to the destination), its --bootstrap-server an alias of
// --brokers, as Kafka's tools name it.
func MirrorOptions(env kit.Env) mirrorcli.Options {
	g := &kit.Globals{}
	return mirrorcli.Options{
		Flags: func(fs *flag.FlagSet) {
			g.RegisterConnection(fs)
			fs.StringVar(&g.Brokers, "bootstrap-server", g.Brokers, "the destination cluster, an alias of --brokers")
		},
		Connect: func() (mirrorcli.Connection, error) {
			conn, err := g.Resolve(env)
			if err != nil {
				return mirrorcli.Connection{}, err
			}
			return mirrorcli.Connection{Brokers: conn.Brokers, Opts: append([]kgo.Opt{kgo.ClientID(conn.ClientID)}, conn.Opts...)}, nil
		},
		FlagsHelp: kit.ConnectionFlagsHelp + "  --bootstrap-server HOST:PORT[,HOST:PORT...]   an alias of --brokers: the destination\n",
	}
}
