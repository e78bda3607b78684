// Package ctl is the tree of `strait`'s client commands (issue 28: a CLI
// for any Kafka cluster, as rpk is for Redpanda): each group in its own
// package over the shared plumbing of package kit.
package ctl

import (
	"github.com/strait-io/strait/cmd/strait/ctl/acl"
	"github.com/strait-io/strait/cmd/strait/ctl/cluster"
	"github.com/strait-io/strait/cmd/strait/ctl/completion"
	"github.com/strait-io/strait/cmd/strait/ctl/consume"
	"github.com/strait-io/strait/cmd/strait/ctl/group"
	"github.com/strait-io/strait/cmd/strait/ctl/kit"
	"github.com/strait-io/strait/cmd/strait/ctl/produce"
	"github.com/strait-io/strait/cmd/strait/ctl/profile"
	"github.com/strait-io/strait/cmd/strait/ctl/topic"
	"github.com/strait-io/strait/cmd/strait/ctl/user"
)

// Groups are the client command groups, in the order `strait --help`
// lists them.
func Groups() []*kit.Group {
	return []*kit.Group{
		topic.Group(),
		group.Group(),
		produce.Group(),
		consume.Group(),
		cluster.Group(),
		acl.Group(),
		user.Group(),
		profile.Group(),
		completion.Group(Tree),
	}
}
