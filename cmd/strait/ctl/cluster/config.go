package cluster

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// configFlags are `cluster config`'s own flags.
type configFlags struct {
	// Broker is the broker whose config is read or set; -1 is the
	// cluster-wide default (Kafka's BROKER resource named '').
	Broker int
}

// configEntry is one config in --json.
type configEntry struct {
	// Broker is the resource: "" for the cluster-wide default, else the id.
	Broker    string  `json:"broker"`
	Key       string  `json:"key"`
	Value     *string `json:"value"`
	Source    string  `json:"source"`
	Sensitive bool    `json:"sensitive"`
}

func configCommand() *kit.Command {
	return &kit.Command{
		Name:    "config",
		Args:    "get KEY | set KEY VALUE | delete KEY | ls  [--broker N]",
		Summary: "broker configs: the cluster-wide default, or broker N's (--broker N)",
		Examples: []string{
			"strait cluster config ls --broker 1",
			"strait cluster config get log.retention.ms --broker 1",
			"strait cluster config set log.retention.ms 86400000          # every broker's default",
			"strait cluster config set log.retention.ms 3600000 --broker 2",
			"strait cluster config delete log.retention.ms --broker 2     # back to the default",
		},
		MinArgs: 1, MaxArgs: 3,
		Flags: func(fs *flag.FlagSet) any {
			f := &configFlags{}
			fs.IntVar(&f.Broker, "broker", -1, "broker `N` (default: the cluster-wide default)")
			return f
		},
		Run: runConfig,
	}
}

func runConfig(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*configFlags)
	var want int
	switch args[0] {
	case "get", "delete":
		want = 2
	case "set":
		want = 3
	case "ls", "list":
		want = 1
	default:
		return c.Usagef("unknown config command %q (get, set, delete or ls)", args[0])
	}
	if len(args) != want {
		return c.Usagef("config %s takes %d argument(s) after it, got %d", args[0], want-1, len(args)-1)
	}
	if f.Broker < -1 {
		return c.Usagef("--broker must be a broker id, got %d", f.Broker)
	}
	var brokers []int32
	resource := ""
	if f.Broker >= 0 {
		brokers = []int32{int32(f.Broker)}
		resource = strconv.Itoa(f.Broker)
	}
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	if f.Broker >= 0 {
		// kgo only says "unknown broker" for an id it has no address of.
		if err := checkBroker(ctx, adm, int32(f.Broker)); err != nil {
			return c.Fail(err)
		}
	}
	switch args[0] {
	case "set":
		return alterConfig(ctx, c, adm, kadm.AlterConfig{Op: kadm.SetConfig, Name: args[1], Value: &args[2]}, resource, brokers)
	case "delete":
		return alterConfig(ctx, c, adm, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: args[1]}, resource, brokers)
	}
	entries, err := describeConfigs(ctx, adm, resource, brokers...)
	if err != nil {
		return c.Fail(err)
	}
	if args[0] == "get" {
		if resource == "" && !slices.ContainsFunc(entries, func(e configEntry) bool { return e.Key == args[1] }) {
			// Kafka's '' resource lists only keys set cluster-wide
			// (DYNAMIC_DEFAULT_BROKER_CONFIG): without one, the value in
			// force is a broker's (the first the cluster lists), said
			// on stderr so stdout stays the value alone.
			return getFromABroker(ctx, c, adm, args[1])
		}
		return printGet(c, entries, args[1], resource)
	}
	if c.Globals.JSON {
		return c.JSON(entries)
	}
	w := kit.NewTable(c.Stdout)
	fmt.Fprintln(w, "KEY\tVALUE\tSOURCE")
	for _, e := range entries {
		fmt.Fprintf(w, "%s\t%s\t%s\n", e.Key, valueText(e), e.Source)
	}
	w.Flush()
	return kit.ExitOK
}

// checkBroker fails unless id is a broker of the cluster.
func checkBroker(ctx context.Context, adm *kadm.Client, id int32) error {
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(md.Brokers, func(b kadm.BrokerDetail) bool { return b.NodeID == id }) {
		return nil
	}
	return fmt.Errorf("broker %d is not in the cluster (brokers %s)", id, bracket(ids(md.Brokers.NodeIDs())))
}

// printGet prints key's value alone (as rpk cluster config get does, for
// scripts), or its entry with --json.
func printGet(c *kit.Ctx, entries []configEntry, key, resource string) int {
	for _, e := range entries {
		if e.Key != key {
			continue
		}
		if c.Globals.JSON {
			return c.JSON(e)
		}
		if e.Value == nil {
			if e.Sensitive {
				fmt.Fprintf(c.Stderr, "strait %s: %s is sensitive: brokers do not return its value\n", c.Cmd, key)
			} else {
				fmt.Fprintf(c.Stderr, "strait %s: %s is not set (null)\n", c.Cmd, key)
			}
			return kit.ExitOK
		}
		fmt.Fprintln(c.Stdout, *e.Value)
		return kit.ExitOK
	}
	return c.Fail(fmt.Errorf("broker %s has no config %s", resource, key))
}

// alterConfig applies one IncrementalAlterConfigs operation and prints
// the outcome.
func alterConfig(ctx context.Context, c *kit.Ctx, adm *kadm.Client, op kadm.AlterConfig, resource string, brokers []int32) int {
	resps, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{op}, brokers...)
	if err == nil && len(resps) != 1 {
		err = fmt.Errorf("the cluster answered for %d resources, want 1", len(resps))
	}
	if err == nil && resps[0].Err != nil {
		err = kit.WithMessage(resps[0].Err, resps[0].ErrMessage)
	}
	if err != nil {
		return c.Fail(err)
	}
	e := configEntry{Broker: resource, Key: op.Name, Value: op.Value}
	if c.Globals.JSON {
		return c.JSON(struct {
			configEntry
			Op string `json:"op"`
		}{e, map[kadm.IncrementalOp]string{kadm.SetConfig: "set", kadm.DeleteConfig: "delete"}[op.Op]})
	}
	where := "the cluster-wide default"
	if resource != "" {
		where = "broker " + resource
	}
	if op.Op == kadm.DeleteConfig {
		fmt.Fprintf(c.Stdout, "deleted %s from %s\n", op.Name, where)
	} else {
		fmt.Fprintf(c.Stdout, "set %s=%s on %s\n", op.Name, *op.Value, where)
	}
	return kit.ExitOK
}

func valueText(e configEntry) string {
	switch {
	case e.Value != nil:
		return *e.Value
	case e.Sensitive:
		return "(sensitive)"
	}
	return "-"
}

// getFromABroker prints key's value on the first broker the cluster
// lists, for a `config get` without --broker when no cluster-wide default
// is set.
func getFromABroker(ctx context.Context, c *kit.Ctx, adm *kadm.Client, key string) int {
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return c.Fail(err)
	}
	ids := md.Brokers.NodeIDs()
	if len(ids) == 0 {
		return c.Fail(fmt.Errorf("%s has no cluster-wide default set, and the cluster lists no broker to read it from", key))
	}
	slices.Sort(ids)
	resource := strconv.Itoa(int(ids[0]))
	entries, err := describeConfigs(ctx, adm, resource, ids[0])
	if err != nil {
		return c.Fail(err)
	}
	if !c.Globals.JSON && slices.ContainsFunc(entries, func(e configEntry) bool { return e.Key == key }) {
		fmt.Fprintf(c.Stderr, "strait %s: no cluster-wide default of %s is set; broker %s's value:\n", c.Cmd, key, resource)
	}
	return printGet(c, entries, key, resource)
}

// describeConfigs is DescribeConfigs of one BROKER resource: brokers names
// it (none: the cluster-wide default, resource "").
func describeConfigs(ctx context.Context, adm *kadm.Client, resource string, brokers ...int32) ([]configEntry, error) {
	rcs, err := adm.DescribeBrokerConfigs(ctx, brokers...)
	if err == nil && len(rcs) != 1 {
		err = fmt.Errorf("the cluster answered for %d resources, want 1", len(rcs))
	}
	if err == nil && rcs[0].Err != nil {
		err = kit.WithMessage(rcs[0].Err, rcs[0].ErrMessage)
	}
	if err != nil {
		return nil, err
	}
	entries := []configEntry{}
	for _, cfg := range rcs[0].Configs {
		entries = append(entries, configEntry{Broker: resource, Key: cfg.Key, Value: cfg.Value,
			Source: cfg.Source.String(), Sensitive: cfg.Sensitive})
	}
	return entries, nil
}
