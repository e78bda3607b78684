package cli

import (
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// parseArgs parses fs from args with flags allowed before and after the
// positional arguments (`describe NAME --json`), which flag.Parse alone
// stops at. After "--" everything is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseHostPorts splits a HOST:PORT[,HOST:PORT...] list, checking each.
func parseHostPorts(s string) ([]string, error) {
	var out []string
	for _, hp := range strings.Split(s, ",") {
		hp = strings.TrimSpace(hp)
		if hp == "" {
			continue
		}
		host, port, err := net.SplitHostPort(hp)
		if err != nil || host == "" {
			return nil, fmt.Errorf("%q is not HOST:PORT", hp)
		}
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("%q: bad port %q", hp, port)
		}
		out = append(out, hp)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no HOST:PORT given")
	}
	return out, nil
}

// listFlag is a repeatable flag (--topic T --topic T2); duplicates are
// dropped, order kept.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	if v == "" {
		return fmt.Errorf("empty value")
	}
	for _, have := range *l {
		if have == v {
			return nil
		}
	}
	*l = append(*l, v)
	return nil
}

// configFlag is a repeatable key=value flag (--config k=v).
type configFlag struct {
	m        map[string]string
	reserved map[string]string // key → the flag to use instead
}

func (c *configFlag) String() string {
	if c == nil || len(c.m) == 0 {
		return ""
	}
	return fmt.Sprint(c.m)
}

func (c *configFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("want key=value")
	}
	if instead, ok := c.reserved[k]; ok {
		return fmt.Errorf("set %s with %s", k, instead)
	}
	if _, dup := c.m[k]; dup {
		return fmt.Errorf("key %q given twice", k)
	}
	if c.m == nil {
		c.m = make(map[string]string)
	}
	c.m[k] = val
	return nil
}
