package kit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Exit statuses.
const (
	ExitOK     = 0
	ExitFailed = 1 // the cluster answered with an error, or could not be reached
	ExitUsage  = 2
)

// Env is what a command reads and writes besides the cluster: no global
// state, so tests run commands in-process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment (HOME, XDG_CONFIG_HOME, STRAIT_*).
	Getenv func(string) string
}

// Group is a top-level command with subcommands (`strait topic ...`).
type Group struct {
	Name    string // "topic"
	Summary string // one line for `strait --help`
	// Help is printed under the synopsis list by `strait NAME --help`:
	// examples first.
	Help     string
	Commands []*Command
}

// Command is one subcommand (`strait topic create`). A Group with a
// single Command named "" runs it directly (`strait produce TOPIC`).
type Command struct {
	Name     string // "create"
	Args     string // synopsis after the name: "TOPIC... [-p N] [-r N] [-c key=value]..."
	Summary  string
	Examples []string
	// MinArgs and MaxArgs bound the positional arguments (MaxArgs -1: any).
	MinArgs, MaxArgs int
	// Flags registers the command's own flags and returns them; Run gets
	// the same value back.
	Flags func(fs *flag.FlagSet) any
	// Offline commands (profile, completion) get no client.
	Offline bool
	Run     func(ctx context.Context, c *Ctx, args []string, flags any) int
}

// Ctx is a running command: where it writes, the connection and the
// clients (made on first use).
type Ctx struct {
	Env
	Cmd     string // "topic create", for messages
	Globals *Globals
	conn    *Conn
	clients clients
}

// Usagef prints a usage error naming the problem and returns ExitUsage.
func (c *Ctx) Usagef(format string, a ...any) int {
	fmt.Fprintf(c.Stderr, "strait %s: %s\n", c.Cmd, fmt.Sprintf(format, a...))
	return ExitUsage
}

// Main runs `strait <group> ...` (args after the group's name) and
// returns the exit status. all is the whole tree, for completion.
func Main(ctx context.Context, g *Group, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if len(g.Commands) == 1 && g.Commands[0].Name == "" {
		return run(ctx, g, g.Commands[0], args, env)
	}
	if len(args) == 0 {
		fmt.Fprintf(env.Stderr, "strait %s: missing command\n\n%s", g.Name, GroupUsage(g))
		return ExitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, GroupUsage(g))
		return ExitOK
	}
	i := slices.IndexFunc(g.Commands, func(c *Command) bool { return c.Name == args[0] })
	if i < 0 {
		fmt.Fprintf(env.Stderr, "strait %s: unknown command %q\n\n%s", g.Name, args[0], GroupUsage(g))
		return ExitUsage
	}
	return run(ctx, g, g.Commands[i], args[1:], env)
}

// Synopsis is "usage: strait topic create TOPIC...".
func Synopsis(g *Group, c *Command) string {
	return strings.Join(strings.Fields(fmt.Sprintf("usage: strait %s %s %s", g.Name, c.Name, c.Args)), " ")
}

// GroupUsage is `strait NAME --help`.
func GroupUsage(g *Group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: strait %s <command> [flags]\n\n%s\n\ncommands:\n", g.Name, g.Summary)
	for _, c := range g.Commands {
		fmt.Fprintf(&b, "  %-14s %s\n", c.Name, c.Summary)
		for _, ex := range c.Examples {
			fmt.Fprintf(&b, "  %-14s   %s\n", "", ex)
		}
	}
	if g.Help != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(g.Help))
	}
	b.WriteString("\n" + GlobalFlagsHelp)
	return b.String()
}

func run(ctx context.Context, g *Group, cmd *Command, args []string, env Env) int {
	name := strings.TrimSpace(g.Name + " " + cmd.Name)
	c := &Ctx{Env: env, Cmd: name, Globals: &Globals{}}
	fs := flag.NewFlagSet("strait "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.Globals.Register(fs)
	var flags any
	if cmd.Flags != nil {
		flags = cmd.Flags(fs)
	}
	synopsis := Synopsis(g, cmd)
	usage := func(format string, a ...any) int {
		c.Usagef(format, a...)
		fmt.Fprintln(env.Stderr, synopsis)
		return ExitUsage
	}
	pos, err := ParseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(env.Stdout, "%s\n\n%s\n", synopsis, cmd.Summary)
		if len(cmd.Examples) > 0 {
			fmt.Fprintf(env.Stdout, "\nexamples:\n")
			for _, ex := range cmd.Examples {
				fmt.Fprintf(env.Stdout, "  %s\n", ex)
			}
		}
		fmt.Fprintf(env.Stdout, "\nflags:\n")
		fs.SetOutput(env.Stdout)
		fs.PrintDefaults()
		if cmd.Name == "" && g.Help != "" {
			// A group that is one command (`strait produce`) has no
			// group help page: its Help goes here.
			fmt.Fprintf(env.Stdout, "\n%s\n", strings.TrimSpace(g.Help))
		}
		return ExitOK
	}
	if err != nil {
		return usage("%v", err)
	}
	switch {
	case len(pos) < cmd.MinArgs:
		return usage("missing argument (want at least %d)", cmd.MinArgs)
	case cmd.MaxArgs >= 0 && len(pos) > cmd.MaxArgs:
		return usage("unexpected argument %q", pos[cmd.MaxArgs])
	}
	if ch, ok := flags.(interface{ Check() error }); ok {
		if err := ch.Check(); err != nil {
			return usage("%v", err)
		}
	}
	if c.Globals.Timeout <= 0 {
		return usage("--timeout must be positive, got %v", c.Globals.Timeout)
	}
	if !cmd.Offline {
		conn, err := c.Globals.Resolve(env)
		if err != nil {
			return usage("%v", err)
		}
		c.conn = conn
		defer c.clients.close()
	}
	ctx, cancel := context.WithTimeout(ctx, c.Globals.Timeout)
	defer cancel()
	return cmd.Run(ctx, c, pos, flags)
}

// ParseArgs parses fs from args with flags allowed before and after the
// positional arguments (`topic describe orders --json`), which flag.Parse
// alone stops at. After "--" everything is positional.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
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
