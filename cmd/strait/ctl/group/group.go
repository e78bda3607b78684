// Package group is `strait group`: list, describe (with lag), delete, seek
// and offset-delete of consumer groups, classic and KIP-848 alike, as
// `rpk group` and Kafka's kafka-consumer-groups.sh do, over public Kafka
// APIs only (any Kafka-compatible cluster).
package group

import (
	"fmt"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// Group is `strait group`.
func Group() *kit.Group {
	return &kit.Group{
		Name:    "group",
		Summary: "list, describe (lag), delete, seek and offset-delete consumer groups",
		Help: `Consumer groups share the partitions of their topics among their members and
commit how far they have read. describe shows each partition's committed
offset, its log end (the high watermark) and the lag between them. seek and
offset-delete change a group's commits; seek refuses a group that still has
members (stop its consumers first), as kafka-consumer-groups --reset-offsets
does. Both classic groups and KIP-848 consumer groups are handled.`,
		Commands: []*kit.Command{listCommand(), describeCommand(), deleteCommand(), seekCommand(), offsetDeleteCommand()},
	}
}

// itemFailure is one line on stderr for one item (a group, a partition)
// that failed while the others went on: the command exits 1 at the end.
func itemFailure(c *kit.Ctx, item string, err error) {
	fmt.Fprintf(c.Stderr, "strait %s: %s: %s\n", c.Cmd, item, kit.Describe(err, c.Conn(), c.Globals.Timeout))
}

// itemErr is an error about one item, named first ("topic orders:
// UNKNOWN_TOPIC_OR_PARTITION: ..."); it does not unwrap, so that
// kit.Describe keeps the name.
type itemErr struct {
	item string
	err  error
}

func (e itemErr) Error() string { return e.item + ": " + kit.Describe(e.err, nil, nil) }

// errName is err's Kafka error name for tables and --json ("" for nil).
func errName(err error) string {
	if err == nil {
		return ""
	}
	return kit.Describe(err, nil, nil)
}
