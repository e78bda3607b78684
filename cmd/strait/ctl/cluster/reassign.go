package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// reassignFlags are `cluster reassign`'s own flags: one mode.
type reassignFlags struct {
	Plan                   string
	Cancel, Verify, List   bool
	Balance, Execute, Wait bool
	// Throttle is the replication throttle of the moves in bytes/s (0:
	// none), cleared once they are complete.
	Throttle int64
}

// Check allows one mode: --plan (alone, or with --cancel or --verify),
// --list, or --balance (with --execute).
func (f *reassignFlags) Check() error {
	modes := 0
	for _, on := range []bool{f.Plan != "", f.List, f.Balance} {
		if on {
			modes++
		}
	}
	switch {
	case modes != 1:
		return errors.New("give one of --plan FILE, --list or --balance")
	case (f.Cancel || f.Verify) && f.Plan == "":
		return errors.New("--cancel and --verify need --plan FILE")
	case f.Cancel && f.Verify:
		return errors.New("--cancel and --verify exclude each other")
	case f.Execute && !f.Balance:
		return errors.New("--execute goes with --balance (a --plan is executed unless --cancel or --verify)")
	case f.Wait && (f.Cancel || f.Verify || f.List || (f.Balance && !f.Execute)):
		return errors.New("--wait goes with a plan being executed")
	case f.Throttle < 0:
		return fmt.Errorf("--throttle must be bytes per second, got %d", f.Throttle)
	case f.Throttle > 0 && (f.Cancel || f.Verify || f.List || (f.Balance && !f.Execute)):
		return errors.New("--throttle goes with a plan being executed")
	}
	return nil
}

func reassignCommand() *kit.Command {
	return &kit.Command{
		Name:    "reassign",
		Args:    "--plan FILE [--cancel|--verify|--wait|--throttle BYTES] | --list | --balance [--execute [--wait] [--throttle BYTES]]",
		Summary: "move partition replicas (kafka-reassign-partitions.sh's JSON plans), list moves, or balance",
		Examples: []string{
			"strait cluster reassign --plan moves.json            # start the moves; prints the rollback plan",
			"strait cluster reassign --plan moves.json --verify   # exit 0 once every move is complete",
			"strait cluster reassign --plan moves.json --cancel",
			"strait cluster reassign --list",
			"strait cluster reassign --balance > plan.json        # a plan spreading replicas and leaders",
			"strait cluster reassign --balance --execute --wait --timeout 10m",
		},
		MaxArgs: 0,
		Flags: func(fs *flag.FlagSet) any {
			f := &reassignFlags{}
			fs.StringVar(&f.Plan, "plan", "", "reassignment JSON `FILE` ({\"version\":1,\"partitions\":[{\"topic\",\"partition\",\"replicas\"}]}; - reads stdin)")
			fs.BoolVar(&f.Cancel, "cancel", false, "cancel the plan's moves (back to the replicas before them)")
			fs.BoolVar(&f.Verify, "verify", false, "whether the plan's moves are complete: exit 0 if all are, 1 if not")
			fs.BoolVar(&f.List, "list", false, "the moves under way")
			fs.BoolVar(&f.Balance, "balance", false, "print a plan spreading replicas and preferred leaders evenly over the brokers")
			fs.BoolVar(&f.Execute, "execute", false, "with --balance: start the plan's moves")
			fs.BoolVar(&f.Wait, "wait", false, "wait until the moves are complete (within --timeout), showing progress")
			fs.Int64Var(&f.Throttle, "throttle", 0, "replication throttle of the moves, `BYTES` per second (KIP-73), cleared by --wait or --verify once they are complete")
			return f
		},
		Run: runReassign,
	}
}

func runReassign(ctx context.Context, c *kit.Ctx, _ []string, flags any) int {
	f := flags.(*reassignFlags)
	cl, err := c.Client()
	if err != nil {
		return c.Fail(err)
	}
	switch {
	case f.List:
		return listReassignments(ctx, c, cl)
	case f.Balance:
		return balance(ctx, c, cl, f.Execute, f.Wait, f.Throttle)
	}
	plan, err := openPlan(c, f.Plan)
	if err != nil {
		return c.Usagef("%v", err)
	}
	switch {
	case f.Cancel:
		return cancelPlan(ctx, c, cl, plan)
	case f.Verify:
		return verifyPlan(ctx, c, cl, plan)
	}
	return executePlan(ctx, c, cl, plan, f.Wait, f.Throttle)
}

// openPlan reads the plan file, or stdin for "-".
func openPlan(c *kit.Ctx, path string) (*reassignPlan, error) {
	var r io.Reader = c.Stdin
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		r = file
	}
	return readPlan(r)
}

// moveResult is one partition's answer in --json.
type moveResult struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas,omitempty"`
	Error     string  `json:"error"`
	Message   string  `json:"message,omitempty"`
}

// executeOutput is `reassign --plan FILE --json`.
type executeOutput struct {
	// Rollback is the partitions' assignment before the moves: a plan that
	// undoes them.
	Rollback *reassignPlan `json:"rollback"`
	Results  []moveResult  `json:"results"`
}

// currentAssignments are every partition of the named topics (all topics
// for none) as Metadata lists them, and the brokers. The request goes to
// the cluster each time: kadm's Metadata may answer from the client's
// cache, seconds old, and a move in progress changes it.
func currentAssignments(ctx context.Context, cl *kgo.Client, topics ...string) ([]assignment, []int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, nil, err
	}
	var out []assignment
	for _, t := range resp.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if len(topics) == 0 {
				continue
			}
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, p := range t.Partitions {
			out = append(out, assignment{Topic: name, Partition: p.Partition, Replicas: slices.Clone(p.Replicas)})
		}
	}
	slices.SortFunc(out, func(a, b assignment) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	var brokers []int32
	for _, b := range resp.Brokers {
		brokers = append(brokers, b.NodeID)
	}
	slices.Sort(brokers)
	return out, brokers, nil
}

// startMoves sends the plan (nil replicas cancel) and returns each
// partition's result in plan order.
func startMoves(ctx context.Context, cl *kgo.Client, as []assignment) ([]moveResult, error) {
	req := kadm.AlterPartitionAssignmentsReq{}
	for _, a := range as {
		req.Assign(a.Topic, a.Partition, a.Replicas)
	}
	resps, err := kadm.NewClient(cl).AlterPartitionAssignments(ctx, req)
	if err != nil {
		return nil, err
	}
	var out []moveResult
	for _, a := range as {
		r := resps[a.Topic][a.Partition]
		res := moveResult{Topic: a.Topic, Partition: a.Partition, Replicas: a.Replicas, Error: "NONE", Message: r.ErrMessage}
		var ke *kerr.Error
		switch {
		case r.Err == nil:
		case errors.As(r.Err, &ke):
			res.Error = ke.Message
		default:
			res.Error = r.Err.Error()
		}
		out = append(out, res)
	}
	return out, nil
}

func planAssignments(plan *reassignPlan) []assignment {
	out := make([]assignment, 0, len(plan.Partitions))
	for _, p := range plan.Partitions {
		out = append(out, assignment{Topic: p.Topic, Partition: p.Partition, Replicas: p.Replicas})
	}
	return out
}

func planTopics(as []assignment) []string {
	var topics []string
	for _, a := range as {
		if !slices.Contains(topics, a.Topic) {
			topics = append(topics, a.Topic)
		}
	}
	return topics
}

// executePlan starts the plan's moves, printing the rollback plan first
// as kafka-reassign-partitions.sh --execute does.
func executePlan(ctx context.Context, c *kit.Ctx, cl *kgo.Client, plan *reassignPlan, wait bool, throttle int64) int {
	moves := planAssignments(plan)
	current, _, err := currentAssignments(ctx, cl, planTopics(moves)...)
	if err != nil {
		return c.Fail(err)
	}
	rollback := assignmentsOf(current, moves)
	results, err := startThrottledMoves(ctx, cl, current, moves, throttle)
	if err != nil {
		return c.Fail(err)
	}
	code := resultsCode(results)
	if c.Globals.JSON {
		if code == kit.ExitOK && wait {
			if err := waitThrottledMoves(ctx, c, cl, current, moves, throttle, "reassign"); err != nil {
				return c.Fail(err)
			}
		}
		if c.JSON(executeOutput{Rollback: toPlan(rollback), Results: results}) != kit.ExitOK {
			return kit.ExitFailed
		}
		return code
	}
	fmt.Fprintln(c.Stdout, "Current partition replica assignment (a --plan that rolls the moves back):")
	if c.JSON(toPlan(rollback)) != kit.ExitOK {
		return kit.ExitFailed
	}
	fmt.Fprintln(c.Stdout)
	printResults(c.Stdout, results)
	if code == kit.ExitOK && wait {
		if err := waitThrottledMoves(ctx, c, cl, current, moves, throttle, "reassign"); err != nil {
			return c.Fail(err)
		}
		fmt.Fprintln(c.Stdout, "every move is complete")
	}
	return code
}

// startThrottledMoves sets the moves' throttles (rate > 0) and starts
// them; nothing starts when the throttles cannot be set.
func startThrottledMoves(ctx context.Context, cl *kgo.Client, current, moves []assignment, rate int64) ([]moveResult, error) {
	if rate > 0 {
		if err := setThrottles(ctx, cl, throttlesFor(current, moves), rate); err != nil {
			return nil, err
		}
	}
	return startMoves(ctx, cl, moves)
}

// waitThrottledMoves is waitMoves, then clears the moves' throttles (rate
// > 0).
func waitThrottledMoves(ctx context.Context, c *kit.Ctx, cl *kgo.Client, current, moves []assignment, rate int64, what string) error {
	if err := waitMoves(ctx, c, cl, moves, what); err != nil {
		return err
	}
	if rate > 0 {
		return clearThrottles(ctx, cl, throttlesFor(current, moves))
	}
	return nil
}

// assignmentsOf are the current assignments of the partitions moves
// names: a plan that rolls them back.
func assignmentsOf(current, moves []assignment) []assignment {
	var out []assignment
	for _, m := range moves {
		i := slices.IndexFunc(current, func(a assignment) bool { return a.Topic == m.Topic && a.Partition == m.Partition })
		if i >= 0 {
			out = append(out, current[i])
		}
	}
	return out
}

// resultsCode is ExitFailed when a partition failed with an error other
// than NONE and those allowed.
func resultsCode(results []moveResult, allowed ...string) int {
	for _, r := range results {
		if r.Error != "NONE" && !slices.Contains(allowed, r.Error) {
			return kit.ExitFailed
		}
	}
	return kit.ExitOK
}

func printResults(w io.Writer, results []moveResult) {
	t := kit.NewTable(w)
	fmt.Fprintln(t, "TOPIC\tPARTITION\tREPLICAS\tERROR")
	for _, r := range results {
		replicas := "-"
		if r.Replicas != nil {
			replicas = fmt.Sprint(r.Replicas)
		}
		errText := r.Error
		if r.Message != "" && r.Error != "NONE" {
			errText += ": " + r.Message
		}
		fmt.Fprintf(t, "%s\t%d\t%s\t%s\n", r.Topic, r.Partition, replicas, errText)
	}
	t.Flush()
}

// cancelPlan cancels the plan's moves; a partition with none under way is
// reported as such (NO_REASSIGNMENT_IN_PROGRESS) without failing.
func cancelPlan(ctx context.Context, c *kit.Ctx, cl *kgo.Client, plan *reassignPlan) int {
	moves := planAssignments(plan)
	for i := range moves {
		moves[i].Replicas = nil
	}
	results, err := startMoves(ctx, cl, moves)
	if err != nil {
		return c.Fail(err)
	}
	code := resultsCode(results, kerr.NoReassignmentInProgress.Message)
	if c.Globals.JSON {
		if c.JSON(results) != kit.ExitOK {
			return kit.ExitFailed
		}
		return code
	}
	printResults(c.Stdout, results)
	return code
}

// ongoing is one move under way (`reassign --list --json`).
type ongoing struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas"`
	Adding    []int32 `json:"adding"`
	Removing  []int32 `json:"removing"`
}

// listOngoing is ListPartitionReassignments with null topics: every move
// under way, sorted.
func listOngoing(ctx context.Context, cl *kgo.Client) ([]ongoing, error) {
	resp, err := kmsg.NewPtrListPartitionReassignmentsRequest().RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	out := []ongoing{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, ongoing{Topic: t.Topic, Partition: p.Partition, Replicas: p.Replicas,
				Adding: p.AddingReplicas, Removing: p.RemovingReplicas})
		}
	}
	slices.SortFunc(out, func(a, b ongoing) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out, nil
}

func listReassignments(ctx context.Context, c *kit.Ctx, cl *kgo.Client) int {
	moves, err := listOngoing(ctx, cl)
	if err != nil {
		return c.Fail(err)
	}
	if c.Globals.JSON {
		return c.JSON(moves)
	}
	t := kit.NewTable(c.Stdout)
	fmt.Fprintln(t, "TOPIC\tPARTITION\tREPLICAS\tADDING\tREMOVING")
	for _, m := range moves {
		fmt.Fprintf(t, "%s\t%d\t%v\t%v\t%v\n", m.Topic, m.Partition, m.Replicas, m.Adding, m.Removing)
	}
	t.Flush()
	return kit.ExitOK
}

// verifyStatus is one partition of `reassign --verify --json`.
type verifyStatus struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Target    []int32 `json:"target"`
	Replicas  []int32 `json:"replicas"`
	// Status is complete, in_progress, or differs (no move under way,
	// and the replicas are not the plan's).
	Status string `json:"status"`
}

// moveStatus compares the plan's partitions with the cluster.
func moveStatus(ctx context.Context, cl *kgo.Client, moves []assignment) ([]verifyStatus, error) {
	current, _, err := currentAssignments(ctx, cl, planTopics(moves)...)
	if err != nil {
		return nil, err
	}
	under, err := listOngoing(ctx, cl)
	if err != nil {
		return nil, err
	}
	var out []verifyStatus
	for _, m := range moves {
		st := verifyStatus{Topic: m.Topic, Partition: m.Partition, Target: m.Replicas, Replicas: []int32{}, Status: "differs"}
		if i := slices.IndexFunc(current, func(a assignment) bool { return a.Topic == m.Topic && a.Partition == m.Partition }); i >= 0 {
			st.Replicas = current[i].Replicas
		}
		moving := slices.ContainsFunc(under, func(o ongoing) bool { return o.Topic == m.Topic && o.Partition == m.Partition })
		switch {
		case moving:
			st.Status = "in_progress"
		case slices.Equal(st.Replicas, m.Replicas):
			st.Status = "complete"
		}
		out = append(out, st)
	}
	return out, nil
}

func verifyPlan(ctx context.Context, c *kit.Ctx, cl *kgo.Client, plan *reassignPlan) int {
	moves := planAssignments(plan)
	sts, err := moveStatus(ctx, cl, moves)
	if err != nil {
		return c.Fail(err)
	}
	code := kit.ExitOK
	for _, st := range sts {
		if st.Status != "complete" {
			code = kit.ExitFailed
		}
	}
	if code == kit.ExitOK {
		// As kafka-reassign-partitions.sh --verify: once every move is
		// complete, no throttle is left on the plan's topics nor on any
		// broker (a broker the moves left held throttles too). A cluster
		// that refuses the keys has none set.
		th := throttlesFor(nil, moves)
		_, brokers, err := currentAssignments(ctx, cl, planTopics(moves)...)
		if err == nil {
			for _, b := range brokers {
				if !slices.Contains(th.Brokers, b) {
					th.Brokers = append(th.Brokers, b)
				}
			}
			err = clearThrottles(ctx, cl, th)
		}
		if err != nil {
			fmt.Fprintf(c.Stderr, "strait %s: the moves are complete; throttles not cleared: %v\n", c.Cmd, err)
		}
	}
	if c.Globals.JSON {
		if c.JSON(sts) != kit.ExitOK {
			return kit.ExitFailed
		}
		return code
	}
	t := kit.NewTable(c.Stdout)
	fmt.Fprintln(t, "TOPIC\tPARTITION\tTARGET\tREPLICAS\tSTATUS")
	for _, st := range sts {
		fmt.Fprintf(t, "%s\t%d\t%v\t%v\t%s\n", st.Topic, st.Partition, st.Target, st.Replicas, st.Status)
	}
	t.Flush()
	return code
}

// differGrace is how long a move may look like none before waitMoves
// gives up on it: Metadata comes from any broker, which may not have
// applied the controller's latest record yet (the move just started, or
// just completed while the controller lists it no more).
const differGrace = 10 * time.Second

// waitMoves polls until every move is complete, printing progress on
// stderr whenever the count changes; a move that stays elsewhere than its
// target (cancelled, or replaced by another) is an error.
func waitMoves(ctx context.Context, c *kit.Ctx, cl *kgo.Client, moves []assignment, what string) error {
	last := -1
	differs := map[string]time.Time{} // since when each move looks like none
	for {
		sts, err := moveStatus(ctx, cl, moves)
		if err != nil {
			return err
		}
		done := 0
		for _, st := range sts {
			key := fmt.Sprintf("%s/%d", st.Topic, st.Partition)
			if st.Status != "differs" {
				delete(differs, key)
				if st.Status == "complete" {
					done++
				}
				continue
			}
			since, ok := differs[key]
			if !ok {
				differs[key] = time.Now()
			} else if time.Since(since) > differGrace {
				return fmt.Errorf("%s is on %v, not moving to %v: cancelled or changed meanwhile", key, st.Replicas, st.Target)
			}
		}
		if done != last {
			fmt.Fprintf(c.Stderr, "strait cluster %s: %d of %d partitions moved\n", what, done, len(moves))
			last = done
		}
		if done == len(moves) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d partitions moved when --timeout %v passed: %w", done, len(moves), c.Globals.Timeout, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// balanceOutput is `reassign --balance --json`.
type balanceOutput struct {
	Current  *reassignPlan `json:"current"`
	Proposed *reassignPlan `json:"proposed"`
	Results  []moveResult  `json:"results,omitempty"`
}

// balance prints (and with execute starts) a plan spreading the replicas
// and preferred leaders of every topic over the brokers Metadata lists.
func balance(ctx context.Context, c *kit.Ctx, cl *kgo.Client, execute, wait bool, throttle int64) int {
	current, brokers, err := currentAssignments(ctx, cl)
	if err != nil {
		return c.Fail(err)
	}
	proposed := balancePlan(current, brokers)
	out := balanceOutput{Current: toPlan(assignmentsOf(current, proposed)), Proposed: toPlan(proposed)}
	code := kit.ExitOK
	if execute && len(proposed) > 0 {
		if out.Results, err = startThrottledMoves(ctx, cl, current, proposed, throttle); err != nil {
			return c.Fail(err)
		}
		code = resultsCode(out.Results)
		if code == kit.ExitOK && wait {
			if err := waitThrottledMoves(ctx, c, cl, current, proposed, throttle, "reassign"); err != nil {
				return c.Fail(err)
			}
		}
	}
	if c.Globals.JSON {
		if c.JSON(out) != kit.ExitOK {
			return kit.ExitFailed
		}
		return code
	}
	if !execute {
		// Only the plan on stdout, so it can be saved as a --plan file;
		// the assignment it replaces on stderr.
		fmt.Fprintf(c.Stderr, "%d partition(s) to move over brokers %v; current assignment:\n", len(proposed), brokers)
		if err := writeJSON(c.Stderr, out.Current); err != nil {
			return c.Fail(err)
		}
		return c.JSON(out.Proposed)
	}
	fmt.Fprintln(c.Stdout, "Current partition replica assignment (a --plan that rolls the moves back):")
	if c.JSON(out.Current) != kit.ExitOK {
		return kit.ExitFailed
	}
	fmt.Fprintln(c.Stdout)
	printResults(c.Stdout, out.Results)
	return code
}

// writeJSON writes v as indented JSON, as kit's --json output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
