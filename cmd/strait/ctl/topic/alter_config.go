package topic

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// keyList is a repeatable flag of comma-separated names.
type keyList []string

func (l *keyList) String() string { return strings.Join(*l, ",") }

func (l *keyList) Set(v string) error {
	for _, k := range strings.Split(v, ",") {
		if k = strings.TrimSpace(k); k == "" {
			return fmt.Errorf("%q has an empty key", v)
		}
		*l = append(*l, k)
	}
	return nil
}

type alterConfigFlags struct {
	set, appendTo, subtract kit.KeyValues
	del                     keyList
	dryRun                  bool
}

// ops are the IncrementalAlterConfigs operations (KIP-339).
func (f *alterConfigFlags) ops() []kadm.AlterConfig {
	var ops []kadm.AlterConfig
	for _, g := range []struct {
		op  kadm.IncrementalOp
		kvs kit.KeyValues
	}{{kadm.SetConfig, f.set}, {kadm.AppendConfig, f.appendTo}, {kadm.SubtractConfig, f.subtract}} {
		for _, kv := range g.kvs {
			ops = append(ops, kadm.AlterConfig{Op: g.op, Name: kv[0], Value: kadm.StringPtr(kv[1])})
		}
	}
	for _, k := range f.del {
		ops = append(ops, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	return ops
}

// Check wants something to change, and each key once: Kafka refuses a
// resource naming a key twice (INVALID_REQUEST), so say which here.
func (f *alterConfigFlags) Check() error {
	ops := f.ops()
	if len(ops) == 0 {
		return fmt.Errorf("nothing to change: give --set, --delete, --append or --subtract")
	}
	seen := map[string]bool{}
	for _, op := range ops {
		if seen[op.Name] {
			return fmt.Errorf("%s is named twice; give each key once", op.Name)
		}
		seen[op.Name] = true
	}
	return nil
}

func alterConfigCommand() *kit.Command {
	return &kit.Command{
		Name:    "alter-config",
		Args:    "TOPIC... [--set key=value]... [--delete key]... [--append key=value]... [--subtract key=value]... [--dry-run]",
		Summary: "change topic configs incrementally (IncrementalAlterConfigs)",
		Examples: []string{
			"strait topic alter-config orders --set retention.ms=3600000 --set cleanup.policy=compact",
			"strait topic alter-config orders payments --delete retention.ms    # back to the cluster's default",
			"strait topic alter-config orders --append cleanup.policy=delete --dry-run",
		},
		MinArgs: 1, MaxArgs: -1,
		Flags: func(fs *flag.FlagSet) any {
			f := &alterConfigFlags{}
			fs.Var(&f.set, "set", "set a config, `key=value` (repeatable)")
			short(fs, "set", "s")
			fs.Var(&f.del, "delete", "remove a config override, `key[,key...]` (repeatable)")
			short(fs, "delete", "d")
			fs.Var(&f.appendTo, "append", "append to a list config, `key=value` (repeatable)")
			fs.Var(&f.subtract, "subtract", "remove from a list config, `key=value` (repeatable)")
			fs.BoolVar(&f.dryRun, "dry-run", false, "validate the change only (validate_only)")
			return f
		},
		Run: runAlterConfig,
	}
}

func runAlterConfig(ctx context.Context, c *kit.Ctx, topics []string, flags any) int {
	f := flags.(*alterConfigFlags)
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	alter, ok := adm.AlterTopicConfigs, "OK"
	if f.dryRun {
		alter, ok = adm.ValidateAlterTopicConfigs, "VALID"
	}
	resps, err := alter(ctx, f.ops(), uniqueSorted(topics)...)
	if err != nil && len(resps) == 0 {
		return c.Fail(err)
	}
	out := newStatuses()
	for _, name := range uniqueSorted(topics) {
		r, err := resps.On(name, nil)
		if err != nil {
			r.Err = noAnswer("topic " + name)
		}
		out.add(c, name, r.Err, r.ErrMessage, ok)
	}
	return out.finish(c)
}
