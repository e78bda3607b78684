package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/admin"
)

// createFlags are create's flags. The source bootstrap has its own flag
// (it is the one config every mirror needs) and becomes bootstrap.servers.
type createFlags struct {
	sourceBootstrap string
	configs         configFlag
}

func (f *createFlags) check() error {
	if f.sourceBootstrap == "" {
		return fmt.Errorf("missing --source-bootstrap")
	}
	if _, err := parseHostPorts(f.sourceBootstrap); err != nil {
		return fmt.Errorf("--source-bootstrap: %w", err)
	}
	return nil
}

var createCommand = command{
	args: "NAME --source-bootstrap HOST:PORT[,HOST:PORT...] [--config key=value]...",
	npos: 1,
	flags: func(fs *flag.FlagSet) any {
		f := &createFlags{configs: configFlag{reserved: map[string]string{"bootstrap.servers": "--source-bootstrap"}}}
		fs.StringVar(&f.sourceBootstrap, "source-bootstrap", "", "the source cluster's bootstrap servers (bootstrap.servers), `HOST:PORT[,HOST:PORT...]`")
		fs.Var(&f.configs, "config", "a mirror config `key=value`: source client settings (security.protocol, sasl.*, ssl.*) or mirror.* (repeatable)")
		return f
	},
	run: func(ctx context.Context, e *env, name string, flags any) int {
		f := flags.(*createFlags)
		hps, _ := parseHostPorts(f.sourceBootstrap) // checked
		configs := map[string]string{"bootstrap.servers": strings.Join(hps, ",")}
		for k, v := range f.configs.m {
			configs[k] = v
		}
		if err := e.client.CreateMirror(ctx, name, configs); err != nil {
			return e.fail(err)
		}
		fmt.Fprintf(e.stdout, "Created mirror %s (source %s).\n", name, configs["bootstrap.servers"])
		return exitOK
	},
}

var deleteCommand = command{
	args:  "NAME",
	npos:  1,
	flags: func(*flag.FlagSet) any { return nil },
	run: func(ctx context.Context, e *env, name string, _ any) int {
		if err := e.client.DeleteMirror(ctx, name); err != nil {
			return e.fail(err)
		}
		fmt.Fprintf(e.stdout, "Deleted mirror %s.\n", name)
		return exitOK
	},
}

type outputFlags struct{ json bool }

func registerJSON(fs *flag.FlagSet) any {
	f := &outputFlags{}
	fs.BoolVar(&f.json, "json", false, "print JSON instead of a table")
	return f
}

var listCommand = command{
	args:  "[--json]",
	flags: registerJSON,
	run: func(ctx context.Context, e *env, _ string, flags any) int {
		ms, err := e.client.ListMirrors(ctx)
		if err != nil {
			return e.fail(err)
		}
		if flags.(*outputFlags).json {
			return e.printJSON(ms)
		}
		printList(e.stdout, ms)
		return exitOK
	},
}

var describeCommand = command{
	args:  "NAME [--json]",
	npos:  1,
	flags: registerJSON,
	run: func(ctx context.Context, e *env, name string, flags any) int {
		ds, err := e.client.DescribeMirrors(ctx, name)
		if err != nil {
			return e.fail(err)
		}
		// One result per name asked. Its Err is a *kerr.Error: the
		// schema has no per-mirror message.
		d := ds[0]
		if d.Err != nil {
			return e.fail(describeError(d.Err))
		}
		if flags.(*outputFlags).json {
			return e.printJSON(d)
		}
		printDescription(e.stdout, d)
		return exitOK
	},
}

// describeError is a described mirror's error as an *admin.Error, which
// fail prints as "NAME: message".
func describeError(err error) error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return &admin.Error{Err: ke}
	}
	return err
}
