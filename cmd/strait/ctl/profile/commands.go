package profile

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

type createFlags struct{ use bool }

func createCommand() *kit.Command {
	return &kit.Command{
		Name:    "create",
		Args:    "NAME [--brokers HOST:PORT,...] [-X key=value]... [--command-config FILE] [--use]",
		Summary: "create a profile from --brokers, -X and --command-config (--use: make it current)",
		Examples: []string{
			"strait profile create local --brokers 127.0.0.1:9092 --use",
			"strait profile create prod --brokers kafka-1:9093 -X tls.ca=/etc/kafka/ca.pem -X sasl.mechanism=SCRAM-SHA-512 -X user=alice -X pass=secret",
		},
		MinArgs: 1, MaxArgs: 1, Offline: true,
		Flags: func(fs *flag.FlagSet) any {
			f := &createFlags{}
			fs.BoolVar(&f.use, "use", false, "make the new profile the current one")
			return f
		},
		Run: func(_ context.Context, c *kit.Ctx, args []string, flags any) int {
			name := args[0]
			if err := checkName(name); err != nil {
				return c.Usagef("%v", err)
			}
			settings, err := fromFlags(c.Globals)
			if err != nil {
				return c.Usagef("%v", err)
			}
			if err := checkSettings(settings); err != nil {
				return c.Usagef("profile %q: %v", name, err)
			}
			pf, err := load(c)
			if err != nil {
				return c.Fail(err)
			}
			if _, ok := pf.Profiles[name]; ok {
				return c.Fail(fmt.Errorf("profile %q already exists in %s (change it with 'strait profile set')", name, pf.Path))
			}
			pf.Profiles[name] = settings
			// The first profile becomes current, as rpk's first profile does.
			if flags.(*createFlags).use || pf.Current == "" {
				pf.Current = name
			}
			if err := pf.Save(); err != nil {
				return c.Fail(err)
			}
			return report(c, pf, name, "created")
		},
	}
}

func useCommand() *kit.Command {
	return &kit.Command{
		Name: "use", Args: "NAME", Summary: "make a profile the current one",
		Examples: []string{"strait profile use prod"},
		MinArgs:  1, MaxArgs: 1, Offline: true,
		Run: func(_ context.Context, c *kit.Ctx, args []string, _ any) int {
			return edit(c, args[0], "using", func(pf *kit.Profiles) error {
				pf.Current = args[0]
				return nil
			})
		},
	}
}

func deleteCommand() *kit.Command {
	return &kit.Command{
		Name: "delete", Args: "NAME", Summary: "delete a profile (if current, no profile is current after)",
		Examples: []string{"strait profile delete old"},
		MinArgs:  1, MaxArgs: 1, Offline: true,
		Run: func(_ context.Context, c *kit.Ctx, args []string, _ any) int {
			name := args[0]
			return edit(c, name, "deleted", func(pf *kit.Profiles) error {
				delete(pf.Profiles, name)
				if pf.Current == name {
					pf.Current = ""
				}
				return nil
			})
		},
	}
}

func setCommand() *kit.Command {
	return &kit.Command{
		Name: "set", Args: "NAME key=value...", Summary: "change settings of a profile (key= removes the key)",
		Examples: []string{
			"strait profile set prod brokers=kafka-1:9093,kafka-2:9093",
			"strait profile set prod pass=newsecret",
			"strait profile set prod tls.ca=",
		},
		MinArgs: 2, MaxArgs: -1, Offline: true,
		Run: func(_ context.Context, c *kit.Ctx, args []string, _ any) int {
			var kv kit.KeyValues
			for _, a := range args[1:] {
				if err := kv.Set(a); err != nil {
					return c.Usagef("%v", err)
				}
			}
			name := args[0]
			return edit(c, name, "updated", func(pf *kit.Profiles) error {
				next := maps.Clone(pf.Profiles[name])
				for _, e := range kv {
					k := e[0]
					if k == "bootstrap.servers" {
						k = "brokers"
					}
					if e[1] == "" {
						delete(next, k)
					} else {
						next[k] = e[1]
					}
				}
				if err := checkSettings(next); err != nil {
					return usageError{fmt.Errorf("profile %q: %w", name, err)}
				}
				pf.Profiles[name] = next
				return nil
			})
		},
	}
}

// usageError is a change's error that is the command line's fault (exit 2).
type usageError struct{ error }

// edit changes the existing profile name with change, saves the file and
// reports action.
func edit(c *kit.Ctx, name, action string, change func(pf *kit.Profiles) error) int {
	pf, err := load(c)
	if err != nil {
		return c.Fail(err)
	}
	if _, err := lookup(pf, name); err != nil {
		return c.Fail(err)
	}
	if err := change(pf); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			return c.Usagef("%v", ue.error)
		}
		return c.Fail(err)
	}
	if err := pf.Save(); err != nil {
		return c.Fail(err)
	}
	return report(c, pf, name, action)
}

// checkName refuses names the file or a shell would mangle.
func checkName(name string) error {
	if name == "" || strings.ContainsAny(name, " \t\n/:=") {
		return errors.New("a profile NAME is not empty and has no spaces, '/', ':' or '='")
	}
	return nil
}

// actionResult is what create, use, delete and set print with --json.
type actionResult struct {
	Action  string `json:"action"`
	Profile string `json:"profile"`
	Current string `json:"current"`
	File    string `json:"file"`
}

// report prints what a change did: one line, or --json.
func report(c *kit.Ctx, pf *kit.Profiles, name, action string) int {
	if c.Globals.JSON {
		return c.JSON(actionResult{Action: action, Profile: name, Current: pf.Current, File: pf.Path})
	}
	msg := fmt.Sprintf("%s profile %q in %s", action, name, pf.Path)
	if pf.Current == name && action != "deleted" {
		msg += " (current)"
	}
	fmt.Fprintln(c.Stdout, msg)
	return kit.ExitOK
}

// names are the profiles in order.
func names(pf *kit.Profiles) []string {
	out := make([]string, 0, len(pf.Profiles))
	for n := range pf.Profiles {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
