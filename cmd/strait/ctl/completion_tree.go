package ctl

import (
	"slices"

	"github.com/strait-io/strait/cmd/strait/ctl/completion"
	"github.com/strait-io/strait/cmd/strait/ctl/kit"
	mirrorcli "github.com/strait-io/strait/mirror/admin/cli"
)

// Tree is every top-level command of `strait` for shell completion: the
// commands main.go runs itself (serve, mirror, bench, version), then the
// client groups.
func Tree() []*completion.Node {
	mirror := &completion.Node{Name: "mirror", Summary: "manage cluster mirrors (create, start, stop, describe, ...)"}
	sets := mirrorcli.CommandFlags(MirrorOptions(kit.Env{Getenv: func(string) string { return "" }}))
	for _, name := range mirrorcli.CommandNames() {
		mirror.Children = append(mirror.Children, &completion.Node{Name: name, Flags: completion.FlagsOf(sets[name])})
	}
	bench := &completion.Node{Name: "bench", Summary: "run a load-generator workload"}
	for _, w := range []string{"produce", "consume", "e2e", "cluster", "mirror", "limits", "report"} {
		bench.Children = append(bench.Children, &completion.Node{Name: w})
	}
	// serve's flags (cmd/strait/serve.go), which this package cannot see.
	serve := &completion.Node{Name: "serve", Summary: "start a broker", Flags: []completion.Flag{
		{Name: "config", Usage: "the broker's properties file", TakesValue: true},
		{Name: "set", Usage: "a broker setting, key=value", TakesValue: true},
		{Name: "override", Usage: "a broker setting, key=value", TakesValue: true},
		{Name: "add-scram", Usage: "a SCRAM credential", TakesValue: true},
	}}
	version := &completion.Node{Name: "version", Summary: "print the version"}
	return slices.Concat([]*completion.Node{serve, mirror, bench, version}, completion.FromGroups(Groups()))
}
