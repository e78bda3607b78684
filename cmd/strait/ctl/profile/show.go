package profile

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// listEntry is one row of `profile list --json`.
type listEntry struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
	Brokers string `json:"brokers"`
}

func listCommand() *kit.Command {
	return &kit.Command{
		Name: "list", Summary: "list the profiles (* marks the current one)",
		Examples: []string{"strait profile list", "strait profile list --json"},
		Offline:  true,
		Run: func(_ context.Context, c *kit.Ctx, _ []string, _ any) int {
			pf, err := load(c)
			if err != nil {
				return c.Fail(err)
			}
			entries := []listEntry{}
			for _, n := range names(pf) {
				entries = append(entries, listEntry{Name: n, Current: n == pf.Current, Brokers: pf.Profiles[n]["brokers"]})
			}
			if c.Globals.JSON {
				return c.JSON(entries)
			}
			tw := kit.NewTable(c.Stdout)
			fmt.Fprintln(tw, "NAME\tBROKERS")
			for _, e := range entries {
				n := e.Name
				if e.Current {
					n += "*"
				}
				fmt.Fprintf(tw, "%s\t%s\n", n, orDash(e.Brokers))
			}
			if err := tw.Flush(); err != nil {
				return c.Fail(err)
			}
			return kit.ExitOK
		},
	}
}

type showFlags struct{ secrets bool }

// shown is `profile show --json`.
type shown struct {
	Name     string            `json:"name"`
	Current  bool              `json:"current"`
	File     string            `json:"file"`
	Settings map[string]string `json:"settings"`
}

func showCommand() *kit.Command {
	return &kit.Command{
		Name: "show", Args: "[NAME] [--show-secrets]",
		Summary:  "print a profile's settings (default: the one in use), passwords masked",
		Examples: []string{"strait profile show", "strait profile show prod --show-secrets"},
		MaxArgs:  1, Offline: true,
		Flags: func(fs *flag.FlagSet) any {
			f := &showFlags{}
			fs.BoolVar(&f.secrets, "show-secrets", false, "print passwords and private keys as stored")
			return f
		},
		Run: func(_ context.Context, c *kit.Ctx, args []string, flags any) int {
			pf, err := load(c)
			if err != nil {
				return c.Fail(err)
			}
			// The profile a command would use: NAME, else --profile,
			// else $STRAIT_PROFILE, else the file's current one.
			name := c.Globals.Profile
			if len(args) == 1 {
				name = args[0]
			}
			if name == "" {
				name = c.Getenv("STRAIT_PROFILE")
			}
			if name == "" {
				name = pf.Current
			}
			if name == "" {
				return c.Fail(errors.New("no profile in use (create one with 'strait profile create NAME --use')"))
			}
			p, err := lookup(pf, name)
			if err != nil {
				return c.Fail(err)
			}
			secrets := flags.(*showFlags).secrets
			out := shown{Name: name, Current: name == pf.Current, File: pf.Path, Settings: map[string]string{}}
			keys := make([]string, 0, len(p))
			for k, v := range p {
				out.Settings[k] = masked(k, v, secrets)
				keys = append(keys, k)
			}
			if c.Globals.JSON {
				return c.JSON(out)
			}
			slices.Sort(keys)
			tw := kit.NewTable(c.Stdout)
			fmt.Fprintf(tw, "PROFILE\t%s\n", name)
			fmt.Fprintf(tw, "CURRENT\t%t\n", out.Current)
			fmt.Fprintf(tw, "FILE\t%s\n\n", pf.Path)
			fmt.Fprintln(tw, "KEY\tVALUE")
			for _, k := range keys {
				fmt.Fprintf(tw, "%s\t%s\n", k, out.Settings[k])
			}
			if err := tw.Flush(); err != nil {
				return c.Fail(err)
			}
			return kit.ExitOK
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
