package topic

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// failure is one item (a topic, or a topic's partition) a command could
// not act on.
type failure struct{ item, reason string }

// reason is a per-item error in one line: Kafka's error name, then the
// broker's own message when it sent one (CreateTopics, DeleteTopics,
// CreatePartitions and the config APIs carry an ErrorMessage that names
// the problem better than the code's generic description).
func reason(c *kit.Ctx, err error, brokerMsg string) string {
	var ke *kerr.Error
	if brokerMsg != "" && errors.As(err, &ke) {
		return ke.Message + ": " + brokerMsg
	}
	return kit.Describe(err, c.Conn(), c.Globals.Timeout)
}

// table is a command's rows for the terminal: capitalised headers, "-"
// for an empty cell.
type table struct {
	indent  string // before every line
	headers []string
	rows    [][]string
	// optional columns are left out when no row has a value in them
	// (rpk shows OFFLINE-REPLICAS or LOAD-ERROR only when there are any).
	optional []string
}

func (t *table) add(cells ...any) {
	row := make([]string, len(cells))
	for i, v := range cells {
		row[i] = fmt.Sprint(v)
		if row[i] == "" {
			row[i] = "-"
		}
	}
	t.rows = append(t.rows, row)
}

// print writes the table, or nothing when it has no rows (a command whose
// every item failed prints only the failures).
func (t *table) print(w io.Writer) {
	if len(t.rows) == 0 {
		return
	}
	t.dropEmptyOptional()
	tw := kit.NewTable(w)
	fmt.Fprintln(tw, t.indent+strings.Join(t.headers, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, t.indent+strings.Join(r, "\t"))
	}
	tw.Flush()
}

// finish ends a command that acts on several items, as rpk's do: --json
// prints all (every item, each with its error), else the table of the
// items that succeeded; each failure is one line on stderr ("strait topic
// delete: orders: UNKNOWN_TOPIC_OR_PARTITION: ..."), and any failure makes
// the exit status 1.
func finish(c *kit.Ctx, all any, t *table, failed []failure) int {
	if c.Globals.JSON {
		if code := c.JSON(all); code != kit.ExitOK {
			return code
		}
	} else {
		t.print(c.Stdout)
	}
	for _, f := range failed {
		fmt.Fprintf(c.Stderr, "strait %s: %s: %s\n", c.Cmd, f.item, f.reason)
	}
	if len(failed) > 0 {
		return kit.ExitFailed
	}
	return kit.ExitOK
}

// joinInt32s is a replica list as Kafka's tools print it: "1,2,3".
func joinInt32s(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ",")
}

func (t *table) dropEmptyOptional() {
	for i := len(t.headers) - 1; i >= 0; i-- {
		if !slices.Contains(t.optional, t.headers[i]) ||
			slices.ContainsFunc(t.rows, func(r []string) bool { return r[i] != "-" }) {
			continue
		}
		t.headers = slices.Delete(t.headers, i, i+1)
		for j := range t.rows {
			t.rows[j] = slices.Delete(t.rows[j], i, i+1)
		}
	}
}

// noAnswer is the error of an item the cluster's response left out.
func noAnswer(item string) error {
	return fmt.Errorf("the cluster's response did not mention %s", item)
}

// topicStatus is one topic's outcome in --json, for the commands whose
// response is an error per topic (DeleteTopics, IncrementalAlterConfigs,
// CreatePartitions).
type topicStatus struct {
	Topic string `json:"topic"`
	// Status is OK, VALID (--dry-run) or FAILED.
	Status string `json:"status"`
	Error  string `json:"error"`
}

// statuses collects topicStatus outcomes and their table (TOPIC STATUS,
// as rpk prints them).
type statuses struct {
	all    []topicStatus
	failed []failure
	t      table
}

func newStatuses() *statuses {
	return &statuses{all: []topicStatus{}, t: table{headers: []string{"TOPIC", "STATUS"}}}
}

// add records topic's outcome: ok is the status of a success.
func (s *statuses) add(c *kit.Ctx, topic string, err error, brokerMsg, ok string) {
	out := topicStatus{Topic: topic, Status: ok}
	if err != nil {
		out.Status, out.Error = "FAILED", reason(c, err, brokerMsg)
		s.failed = append(s.failed, failure{topic, out.Error})
	} else {
		s.t.add(topic, ok)
	}
	s.all = append(s.all, out)
}

func (s *statuses) finish(c *kit.Ctx) int { return finish(c, s.all, &s.t, s.failed) }

// short registers -s as rpk's one-letter form of --long (Go's flag package
// has no short forms of its own).
func short(fs *flag.FlagSet, long, s string) {
	fs.Var(fs.Lookup(long).Value, s, "short for --"+long)
}
