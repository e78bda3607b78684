package cluster

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// decommissionFlags are `cluster decommission`'s own flags.
type decommissionFlags struct {
	// NoWait returns once the moves started.
	NoWait bool
	// Unregister removes the broker's registration once nothing is left
	// on it (UnregisterBroker, kafka-cluster.sh unregister).
	Unregister bool
	// Throttle is the moves' replication throttle in bytes/s (0: none).
	Throttle int64
}

// decommissionOutput is `cluster decommission --json`.
type decommissionOutput struct {
	Broker       int32        `json:"broker"`
	Moves        []moveResult `json:"moves"`
	Complete     bool         `json:"complete"`
	Unregistered bool         `json:"unregistered"`
}

func decommissionCommand() *kit.Command {
	return &kit.Command{
		Name:    "decommission",
		Args:    "BROKER [--throttle BYTES] [--no-wait] [--unregister]",
		Summary: "move every replica off a broker and wait until none is left on it",
		Examples: []string{
			"strait cluster decommission 4 --timeout 30m   # then stop broker 4",
			"strait cluster decommission 4 --unregister    # once it is stopped: forget it",
		},
		MinArgs: 1, MaxArgs: 1,
		Flags: func(fs *flag.FlagSet) any {
			f := &decommissionFlags{}
			fs.BoolVar(&f.NoWait, "no-wait", false, "return once the moves started")
			fs.BoolVar(&f.Unregister, "unregister", false, "then unregister the broker (stop it first: it registers again when it restarts)")
			fs.Int64Var(&f.Throttle, "throttle", 0, "replication throttle of the moves, `BYTES` per second (KIP-73), cleared once they are complete")
			return f
		},
		Run: runDecommission,
	}
}

func runDecommission(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*decommissionFlags)
	id64, err := strconv.ParseInt(args[0], 10, 32)
	if err != nil || id64 < 0 {
		return c.Usagef("BROKER must be a broker id, got %q", args[0])
	}
	if f.NoWait && f.Unregister {
		return c.Usagef("--unregister waits for the moves: it excludes --no-wait")
	}
	if f.Throttle < 0 {
		return c.Usagef("--throttle must be bytes per second, got %d", f.Throttle)
	}
	id := int32(id64)
	cl, err := c.Client()
	if err != nil {
		return c.Fail(err)
	}
	current, brokers, err := currentAssignments(ctx, cl)
	if err != nil {
		return c.Fail(err)
	}
	moves := decommissionPlan(current, brokers, id)
	for _, m := range moves {
		if slices.Contains(m.Replicas, id) {
			return c.Fail(fmt.Errorf("%s/%d cannot leave broker %d: every other broker (%v) holds a replica of it already",
				m.Topic, m.Partition, id, brokers))
		}
	}
	out := decommissionOutput{Broker: id, Moves: []moveResult{}}
	if len(moves) > 0 {
		if !c.Globals.JSON {
			fmt.Fprintf(c.Stderr, "strait cluster decommission: moving %d partition(s) off broker %d\n", len(moves), id)
		}
		if out.Moves, err = startThrottledMoves(ctx, cl, current, moves, f.Throttle); err != nil {
			return c.Fail(err)
		}
		if resultsCode(out.Moves) != kit.ExitOK {
			printResults(c.Stderr, out.Moves)
			return c.Fail(fmt.Errorf("some moves off broker %d were refused", id))
		}
	}
	if !f.NoWait {
		if err := waitThrottledMoves(ctx, c, cl, current, moves, f.Throttle, "decommission"); err != nil {
			return c.Fail(err)
		}
		out.Complete = true
	}
	if f.Unregister {
		if err := unregisterBroker(ctx, cl, id); err != nil {
			return c.Fail(err)
		}
		out.Unregistered = true
	}
	if c.Globals.JSON {
		return c.JSON(out)
	}
	switch {
	case out.Unregistered:
		fmt.Fprintf(c.Stdout, "broker %d holds no replica and is unregistered\n", id)
	case out.Complete:
		fmt.Fprintf(c.Stdout, "broker %d holds no replica: stop it, then `strait cluster decommission %d --unregister`\n", id, id)
	default:
		printResults(c.Stdout, out.Moves)
	}
	return kit.ExitOK
}

// unregisterBroker sends UnregisterBroker (64).
func unregisterBroker(ctx context.Context, cl *kgo.Client, id int32) error {
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = id
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if resp.ErrorMessage != nil {
			return fmt.Errorf("unregister broker %d: %w (%s)", id, err, *resp.ErrorMessage)
		}
		return fmt.Errorf("unregister broker %d: %w", id, err)
	}
	return nil
}
