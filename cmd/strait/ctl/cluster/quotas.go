package cluster

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// defaultEntity names the default entity of a type on the command line,
// as kafka-configs prints it (--entity-default).
const defaultEntity = "<default>"

// quotasFlags are `cluster quotas`' own flags.
type quotasFlags struct {
	User, ClientID, IP string
	Strict             bool
	Set                kit.KeyValues
	Delete             keyList
}

// keyList is a repeatable flag of names.
type keyList []string

func (k *keyList) String() string { return strings.Join(*k, ",") }
func (k *keyList) Set(v string) error {
	if v = strings.TrimSpace(v); v == "" {
		return fmt.Errorf("an empty key")
	}
	*k = append(*k, v)
	return nil
}

// quotaEntry is one entity's quotas in --json: the entity by type, a null
// name for the default.
type quotaEntry struct {
	Entity map[string]*string `json:"entity"`
	Values map[string]float64 `json:"values"`
}

func quotasCommand() *kit.Command {
	return &kit.Command{
		Name:    "quotas",
		Args:    "describe | alter  [--user U] [--client-id C] [--ip A] [--set KEY=VALUE]... [--delete KEY]...",
		Summary: "client quotas (KIP-546): byte rates and request percentage per user, client id or both",
		Examples: []string{
			"strait cluster quotas describe",
			"strait cluster quotas describe --user alice --strict",
			"strait cluster quotas alter --user alice --set producer_byte_rate=5000000",
			"strait cluster quotas alter --user '<default>' --client-id '<default>' --set consumer_byte_rate=1048576",
			"strait cluster quotas alter --user alice --delete producer_byte_rate",
		},
		MinArgs: 1, MaxArgs: 1,
		Flags: func(fs *flag.FlagSet) any {
			f := &quotasFlags{}
			fs.StringVar(&f.User, "user", "", "the user `U` (the principal's name; '<default>' for every user without its own)")
			fs.StringVar(&f.ClientID, "client-id", "", "the client id `C` ('<default>' for every client id without its own)")
			fs.StringVar(&f.IP, "ip", "", "the client address `A` ('<default>' for every address)")
			fs.BoolVar(&f.Strict, "strict", false, "describe: only entities with no other component than those named")
			fs.Var(&f.Set, "set", "alter: set `KEY=VALUE` (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate, connection_creation_rate)")
			fs.Var(&f.Delete, "delete", "alter: remove `KEY`")
			return f
		},
		Run: runQuotas,
	}
}

// components are the entity components the flags name, in type order.
func (f *quotasFlags) components() []kadm.ClientQuotaEntityComponent {
	var out []kadm.ClientQuotaEntityComponent
	for _, c := range [][2]string{{"user", f.User}, {"client-id", f.ClientID}, {"ip", f.IP}} {
		if c[1] == "" {
			continue
		}
		comp := kadm.ClientQuotaEntityComponent{Type: c[0]}
		if c[1] != defaultEntity {
			comp.Name = &c[1]
		}
		out = append(out, comp)
	}
	return out
}

func runQuotas(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*quotasFlags)
	switch args[0] {
	case "describe", "ls", "list":
		if len(f.Set) > 0 || len(f.Delete) > 0 {
			return c.Usagef("--set and --delete are for quotas alter")
		}
	case "alter":
		if len(f.components()) == 0 {
			return c.Usagef("quotas alter needs --user, --client-id or --ip")
		}
		if len(f.Set) == 0 && len(f.Delete) == 0 {
			return c.Usagef("quotas alter needs --set KEY=VALUE or --delete KEY")
		}
	default:
		return c.Usagef("unknown quotas command %q (describe or alter)", args[0])
	}
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	if args[0] == "alter" {
		return alterQuotas(ctx, c, adm, f)
	}
	var filter []kadm.DescribeClientQuotaComponent
	for _, comp := range f.components() {
		d := kadm.DescribeClientQuotaComponent{Type: comp.Type, MatchName: comp.Name, MatchType: 0}
		if comp.Name == nil {
			d.MatchType = 1 // DEFAULT
		}
		filter = append(filter, d)
	}
	described, err := adm.DescribeClientQuotas(ctx, f.Strict, filter)
	if err != nil {
		return c.Fail(err)
	}
	entries := []quotaEntry{}
	for _, q := range described {
		e := quotaEntry{Entity: map[string]*string{}, Values: map[string]float64{}}
		for _, comp := range q.Entity {
			e.Entity[comp.Type] = comp.Name
		}
		for _, v := range q.Values {
			e.Values[v.Key] = v.Value
		}
		entries = append(entries, e)
	}
	if c.Globals.JSON {
		return c.JSON(entries)
	}
	w := kit.NewTable(c.Stdout)
	fmt.Fprintln(w, "ENTITY\tKEY\tVALUE")
	for _, e := range entries {
		for _, k := range slices.Sorted(maps.Keys(e.Values)) {
			fmt.Fprintf(w, "%s\t%s\t%s\n", entityText(e.Entity), k, strconv.FormatFloat(e.Values[k], 'f', -1, 64))
		}
	}
	w.Flush()
	return kit.ExitOK
}

// entityText is an entity as kafka-configs names it: user=alice,
// client-id=<default>.
func entityText(entity map[string]*string) string {
	var parts []string
	for _, typ := range []string{"user", "client-id", "ip"} {
		name, ok := entity[typ]
		if !ok {
			continue
		}
		n := defaultEntity
		if name != nil {
			n = *name
		}
		parts = append(parts, typ+"="+n)
	}
	return strings.Join(parts, ",")
}

func alterQuotas(ctx context.Context, c *kit.Ctx, adm *kadm.Client, f *quotasFlags) int {
	entry := kadm.AlterClientQuotaEntry{Entity: f.components()}
	for _, kv := range f.Set {
		v, err := strconv.ParseFloat(kv[1], 64)
		if err != nil {
			return c.Usagef("--set %s=%s: the value must be a number", kv[0], kv[1])
		}
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: kv[0], Value: v})
	}
	for _, k := range f.Delete {
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
	}
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{entry})
	if err != nil {
		return c.Fail(err)
	}
	entity := map[string]*string{}
	for _, comp := range entry.Entity {
		entity[comp.Type] = comp.Name
	}
	if len(res) == 1 && res[0].Err != nil {
		return c.ItemFailed(entityText(entity), kit.WithMessage(res[0].Err, res[0].ErrMessage))
	}
	if c.Globals.JSON {
		return c.JSON(map[string]any{"entity": entity, "altered": true})
	}
	fmt.Fprintf(c.Stdout, "altered %s\n", entityText(entity))
	return kit.ExitOK
}
