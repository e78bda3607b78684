package kit

import "flag"

// ConnectionFlagsHelp is the help of the flags RegisterConnection adds.
const ConnectionFlagsHelp = `  --brokers HOST:PORT[,HOST:PORT...]   the cluster (default: the profile's, else
                                       $STRAIT_BROKERS, else 127.0.0.1:9092)
  -X key=value        a client setting, repeatable: brokers, Kafka's client
                      properties (security.protocol, ssl.truststore.location,
                      ssl.keystore.location, sasl.mechanism, sasl.jaas.config,
                      client.id) or rpk's short forms (tls.enabled, tls.ca,
                      tls.cert, tls.key, user, pass)
  --command-config FILE   Kafka client properties (key=value lines), as Kafka's
                      tools take them
  --profile NAME      a profile of the profile file (default: its current one,
                      or $STRAIT_PROFILE); see 'strait profile'
  --config-file FILE  the profile file (default $XDG_CONFIG_HOME/strait/profiles.yaml,
                      else ~/.config/strait/profiles.yaml)
`

// RegisterConnection adds the connection's flags alone (--brokers, -X,
// --command-config, --profile, --config-file) to fs, with g's values as
// defaults: for a command line with its own --json and --timeout, such as
// `strait mirror`'s.
func (g *Globals) RegisterConnection(fs *flag.FlagSet) {
	fs.StringVar(&g.Brokers, "brokers", g.Brokers, "the cluster, `HOST:PORT[,HOST:PORT...]`")
	fs.Var(&g.X, "X", "a client setting, `key=value` (repeatable)")
	fs.StringVar(&g.CommandConfig, "command-config", g.CommandConfig, "Kafka client properties `FILE`")
	fs.StringVar(&g.Profile, "profile", g.Profile, "the profile `NAME` to use")
	fs.StringVar(&g.ConfigFile, "config-file", g.ConfigFile, "the profile `FILE`")
}
