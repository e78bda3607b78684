// Package completion is `strait completion bash|zsh|fish`: static shell
// completion scripts (groups, subcommands, flags) generated from the
// command tree it is given, as cobra's and rpk's completion commands
// print them. It takes the tree as an argument so that package ctl, which
// registers this group, is not imported here.
package completion

import (
	"flag"
	"slices"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// Node is a command of the tree: a top-level command (topic, serve) with
// its subcommands, or a subcommand with its flags.
type Node struct {
	Name    string
	Summary string
	// Flags are what the command takes when it runs without a
	// subcommand (serve, produce) or as a subcommand (topic create).
	Flags    []Flag
	Children []*Node
}

// Flag is one flag of a command.
type Flag struct {
	Name       string // "partitions", "X"
	Usage      string
	TakesValue bool // not a boolean flag: the next word is its value
}

// Dash is the flag as typed: -X for one letter, --name otherwise (Go's
// flag package takes both forms; the help prints these).
func (f Flag) Dash() string {
	if len(f.Name) == 1 {
		return "-" + f.Name
	}
	return "--" + f.Name
}

// FlagsOf lists fs's flags in name order.
func FlagsOf(fs *flag.FlagSet) []Flag {
	var out []Flag
	fs.VisitAll(func(f *flag.Flag) {
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		out = append(out, Flag{Name: f.Name, Usage: f.Usage, TakesValue: !ok || !b.IsBoolFlag()})
	})
	return out
}

// FromGroups is the tree of kit's command groups: each command's flags
// are kit's global flags and its own.
func FromGroups(groups []*kit.Group) []*Node {
	out := make([]*Node, 0, len(groups))
	for _, g := range groups {
		n := &Node{Name: g.Name, Summary: g.Summary}
		for _, c := range g.Commands {
			fs := flag.NewFlagSet(g.Name+" "+c.Name, flag.ContinueOnError)
			(&kit.Globals{}).Register(fs)
			if c.Flags != nil {
				c.Flags(fs)
			}
			if c.Name == "" {
				n.Flags = FlagsOf(fs)
				continue
			}
			n.Children = append(n.Children, &Node{Name: c.Name, Summary: c.Summary, Flags: FlagsOf(fs)})
		}
		out = append(out, n)
	}
	return out
}

// valueFlags are the flags anywhere in the tree that take a value, sorted:
// the scripts skip the word after one when finding the command typed.
func valueFlags(tree []*Node) []string {
	var out []string
	var walk func(ns []*Node)
	walk = func(ns []*Node) {
		for _, n := range ns {
			for _, f := range n.Flags {
				if f.TakesValue && !slices.Contains(out, f.Dash()) {
					out = append(out, f.Dash())
				}
			}
			walk(n.Children)
		}
	}
	walk(tree)
	slices.Sort(out)
	return out
}

func names(ns []*Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return out
}

func dashes(fs []Flag) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Dash()
	}
	return out
}
