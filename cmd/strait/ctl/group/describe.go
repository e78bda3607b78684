package group

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

func describeCommand() *kit.Command {
	return &kit.Command{
		Name:    "describe",
		Args:    "GROUP...",
		Summary: "show groups' state, members and per-partition offsets, log end and lag",
		Examples: []string{
			"strait group describe orders-app",
			"strait group describe orders-app billing --json",
		},
		MinArgs: 1, MaxArgs: -1,
		Run: runDescribe,
	}
}

// describeJSON is one group in `describe --json`.
type describeJSON struct {
	Group        string          `json:"group"`
	Coordinator  int32           `json:"coordinator"`
	State        string          `json:"state"`
	Type         string          `json:"type"`
	ProtocolType string          `json:"protocol_type"`
	Protocol     string          `json:"protocol"`
	Members      []memberJSON    `json:"members"`
	Partitions   []partitionJSON `json:"partitions"`
	TotalLag     int64           `json:"total_lag"`
	Error        string          `json:"error"`
}

type memberJSON struct {
	MemberID   string           `json:"member_id"`
	InstanceID *string          `json:"instance_id"`
	ClientID   string           `json:"client_id"`
	ClientHost string           `json:"client_host"`
	Assigned   []topicPartsJSON `json:"assigned"`
}

type topicPartsJSON struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// partitionJSON: null for what is not known (nothing committed, a
// partition that cannot be listed).
type partitionJSON struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	CurrentOffset  *int64 `json:"current_offset"`
	LogStartOffset *int64 `json:"log_start_offset"`
	LogEndOffset   *int64 `json:"log_end_offset"`
	Lag            *int64 `json:"lag"`
	MemberID       string `json:"member_id"`
	ClientID       string `json:"client_id"`
	ClientHost     string `json:"client_host"`
	Error          string `json:"error"`
}

func known(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func runDescribe(ctx context.Context, c *kit.Ctx, groups []string, _ any) int {
	cl, err := c.Client()
	if err != nil {
		return c.Fail(err)
	}
	adm := kadm.NewClient(cl)
	groups = unique(groups)
	ds := describeGroups(ctx, cl, groups)
	if err := ctx.Err(); err != nil {
		return c.Fail(err)
	}
	var ok []*described
	for _, g := range groups {
		if ds[g].Err == nil {
			ok = append(ok, ds[g])
		}
	}
	lags, err := groupLag(ctx, adm, ok)
	if err != nil {
		return c.Fail(err)
	}
	var out []describeJSON
	for _, g := range groups {
		out = append(out, toJSON(ds[g], lags[g]))
	}
	code := kit.ExitOK
	if c.Globals.JSON {
		code = c.JSON(out)
	} else {
		printDescribed(c.Stdout, out)
	}
	for _, g := range groups {
		if err := ds[g].Err; err != nil {
			itemFailure(c, g, err)
			code = kit.ExitFailed
		}
	}
	return code
}

func toJSON(d *described, rows []partitionLag) describeJSON {
	j := describeJSON{Group: d.Group, Coordinator: d.Coordinator, State: d.State, Type: d.Type,
		ProtocolType: d.ProtocolType, Protocol: d.Protocol, Error: errName(d.Err),
		Members: []memberJSON{}, Partitions: []partitionJSON{}}
	if d.Err != nil {
		return j
	}
	for _, m := range d.Members {
		mj := memberJSON{MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID,
			ClientHost: m.ClientHost, Assigned: []topicPartsJSON{}}
		for _, tp := range m.Assigned.Sorted() {
			mj.Assigned = append(mj.Assigned, topicPartsJSON{Topic: tp.Topic, Partitions: tp.Partitions})
		}
		j.Members = append(j.Members, mj)
	}
	for _, r := range rows {
		pj := partitionJSON{Topic: r.Topic, Partition: r.Partition, CurrentOffset: known(r.Commit),
			LogStartOffset: known(r.Start), LogEndOffset: known(r.End), Lag: known(r.Lag), Error: errName(r.Err)}
		if r.Member != nil {
			pj.MemberID, pj.ClientID, pj.ClientHost = r.Member.MemberID, r.Member.ClientID, r.Member.ClientHost
		}
		if r.Lag > 0 {
			j.TotalLag += r.Lag
		}
		j.Partitions = append(j.Partitions, pj)
	}
	return j
}

// printDescribed prints each group as rpk group describe does: a summary,
// then a row per partition with Kafka's columns (kafka-consumer-groups
// --describe), "-" for what is not known; the log start offset is left to
// --json to keep rows within a terminal.
func printDescribed(w io.Writer, groups []describeJSON) {
	first := true
	for _, g := range groups {
		if g.Error != "" {
			continue
		}
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		tw := kit.NewTable(w)
		fmt.Fprintf(tw, "GROUP\t%s\n", g.Group)
		fmt.Fprintf(tw, "COORDINATOR\t%d\n", g.Coordinator)
		fmt.Fprintf(tw, "STATE\t%s\n", g.State)
		fmt.Fprintf(tw, "TYPE\t%s\n", g.Type)
		fmt.Fprintf(tw, "PROTOCOL\t%s\n", dash(g.Protocol))
		fmt.Fprintf(tw, "MEMBERS\t%d\n", len(g.Members))
		fmt.Fprintf(tw, "TOTAL-LAG\t%d\n", g.TotalLag)
		tw.Flush()
		if len(g.Partitions) == 0 {
			continue
		}
		fmt.Fprintln(w)
		withErr := false
		for _, p := range g.Partitions {
			withErr = withErr || p.Error != ""
		}
		tw = kit.NewTable(w)
		header := "TOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tMEMBER-ID\tCLIENT-ID\tHOST"
		if withErr {
			header += "\tERROR"
		}
		fmt.Fprintln(tw, header)
		for _, p := range g.Partitions {
			cols := []string{p.Topic, strconv.Itoa(int(p.Partition)), num(p.CurrentOffset), num(p.LogEndOffset),
				num(p.Lag), dash(p.MemberID), dash(p.ClientID), dash(p.ClientHost)}
			if withErr {
				cols = append(cols, dash(p.Error))
			}
			fmt.Fprintln(tw, strings.Join(cols, "\t"))
		}
		tw.Flush()
	}
}

func num(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// unique is args without repeats, in their order.
func unique(args []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range args {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}
