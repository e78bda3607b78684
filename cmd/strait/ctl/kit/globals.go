package kit

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// GlobalFlagsHelp is the global flags' part of every --help.
const GlobalFlagsHelp = `global flags (before or after the command's arguments):
` + ConnectionFlagsHelp + `  --json              machine-readable output
  --timeout DURATION  time limit of the command (default 30s)
`

// Globals are the flags every command takes.
type Globals struct {
	Brokers       string
	X             KeyValues
	CommandConfig string
	Profile       string
	ConfigFile    string
	JSON          bool
	Timeout       time.Duration
}

// Register adds the global flags to fs.
func (g *Globals) Register(fs *flag.FlagSet) {
	if g.Timeout == 0 {
		g.Timeout = 30 * time.Second
	}
	g.RegisterConnection(fs)
	fs.BoolVar(&g.JSON, "json", g.JSON, "machine-readable output")
	fs.DurationVar(&g.Timeout, "timeout", g.Timeout, "time limit of the command")
}

// KeyValues is a repeatable key=value flag, in the order given.
type KeyValues [][2]string

func (kv *KeyValues) String() string {
	if kv == nil {
		return ""
	}
	parts := make([]string, len(*kv))
	for i, p := range *kv {
		parts[i] = p[0] + "=" + p[1]
	}
	return strings.Join(parts, ",")
}

// Set takes one key=value.
func (kv *KeyValues) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if k = strings.TrimSpace(k); !ok || k == "" {
		return fmt.Errorf("%q is not key=value", v)
	}
	*kv = append(*kv, [2]string{k, val})
	return nil
}

// Map is the pairs as a map, later keys winning.
func (kv KeyValues) Map() map[string]string {
	m := make(map[string]string, len(kv))
	for _, p := range kv {
		m[p[0]] = p[1]
	}
	return m
}
