// Package profile is `strait profile`: named connection settings in the
// profile file (kit.Profiles), as rpk's profiles are. Every command is
// offline: it reads and writes the file only, never a cluster.
package profile

import (
	"fmt"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// Group is `strait profile`.
func Group() *kit.Group {
	return &kit.Group{
		Name:    "profile",
		Summary: "manage connection profiles (brokers, TLS, SASL) in the profile file",
		Help: `A profile holds the settings -X takes (brokers, security.protocol, tls.ca,
sasl.mechanism, user, pass, ...). The current profile is used by every
command unless --profile, $STRAIT_PROFILE or explicit flags say otherwise.
The file is $XDG_CONFIG_HOME/strait/profiles.yaml (else
~/.config/strait/profiles.yaml, or --config-file), written with mode 0600.`,
		Commands: []*kit.Command{createCommand(), useCommand(), listCommand(), showCommand(), deleteCommand(), setCommand()},
	}
}

// load reads the profile file the command's flags and environment name.
func load(c *kit.Ctx) (*kit.Profiles, error) {
	return kit.LoadProfiles(kit.ProfilePath(c.Globals.ConfigFile, c.Env))
}

// lookup is the named profile, or an error naming the file.
func lookup(pf *kit.Profiles, name string) (map[string]string, error) {
	p, ok := pf.Profiles[name]
	if !ok {
		return nil, fmt.Errorf("no profile %q in %s", name, pf.Path)
	}
	return p, nil
}
