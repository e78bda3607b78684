package cluster

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// health is `cluster health --json`. It is computed from Metadata (and the
// topics' min.insync.replicas from DescribeConfigs), as any Kafka client
// sees the cluster; rpk asks Redpanda's admin API instead, which Kafka has
// not.
type health struct {
	Healthy          bool     `json:"healthy"`
	UnhealthyReasons []string `json:"unhealthy_reasons"`
	Controller       int32    `json:"controller"`
	Brokers          []int32  `json:"brokers"`
	// BrokersDown are brokers that replicas are assigned to but that the
	// cluster does not list as alive (or lists as offline replicas): a
	// broker holding no replica is not known to be down.
	BrokersDown []int32 `json:"brokers_down"`
	// Offline partitions have no leader and no live in-sync replica to
	// become one (Kafka's OfflinePartitionsCount counts leader -1).
	Offline []string `json:"offline_partitions"`
	// Leaderless partitions have no live leader now.
	Leaderless      []string `json:"leaderless_partitions"`
	UnderReplicated []string `json:"under_replicated_partitions"`
	// UnderMinISR have fewer in-sync replicas than the topic's
	// min.insync.replicas: acks=all produce fails with
	// NOT_ENOUGH_REPLICAS.
	UnderMinISR []string `json:"under_min_isr_partitions"`
	// MinISRChecked is false when the topics' configs could not be read.
	MinISRChecked bool `json:"min_isr_checked"`
}

// listedInTable bounds each partition list in the table; --json has all.
const listedInTable = 20

// healthFlags are `cluster health`'s own flags.
type healthFlags struct {
	// Wait re-checks until the cluster is healthy or --timeout passes
	// (rpk cluster health --watch --exit-when-healthy).
	Wait bool
}

func healthCommand() *kit.Command {
	return &kit.Command{
		Name:    "health",
		Summary: "whether the cluster is healthy: exit 0 if so, 1 if not",
		Examples: []string{
			"strait cluster health",
			"strait cluster health --json | jq .unhealthy_reasons",
			"strait cluster health --wait --timeout 5m   # until healthy, as rpk's --exit-when-healthy",
		},
		Flags: func(fs *flag.FlagSet) any {
			f := &healthFlags{}
			fs.BoolVar(&f.Wait, "wait", false, "check every second until healthy (exit 0) or --timeout (exit 1)")
			return f
		},
		Run: runHealth,
	}
}

// checkInterval is how often --wait checks again.
const checkInterval = time.Second

func runHealth(ctx context.Context, c *kit.Ctx, _ []string, flags any) int {
	wait := flags.(*healthFlags).Wait
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	var (
		h       health
		checked bool
		cfgErr  error
	)
	for {
		got, gotCfgErr, err := checkHealth(ctx, adm)
		if err == nil {
			h, cfgErr, checked = got, gotCfgErr, true
		}
		if !wait && err != nil {
			return c.Fail(err)
		}
		if !wait || (err == nil && h.Healthy) {
			break
		}
		// --wait: an unreachable cluster or an unhealthy one is checked
		// again until the time limit; then the last answer is printed.
		t := time.NewTimer(checkInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			if !checked {
				return c.Fail(ctx.Err())
			}
		case <-t.C:
			continue
		}
		break
	}
	if cfgErr != nil {
		fmt.Fprintf(c.Stderr, "strait %s: under-min-ISR not checked: %s\n", c.Cmd, kit.Describe(cfgErr, c.Conn(), c.Globals.Timeout))
	}
	code := kit.ExitOK
	if !h.Healthy {
		code = kit.ExitFailed
	}
	if c.Globals.JSON {
		return c.JSONThen(h, code)
	}
	w := kit.NewTable(c.Stdout)
	fmt.Fprintf(w, "HEALTHY\t%v\n", h.Healthy)
	fmt.Fprintf(w, "UNHEALTHY REASONS\t%s\n", bracket(h.UnhealthyReasons))
	fmt.Fprintf(w, "CONTROLLER\t%d\n", h.Controller)
	fmt.Fprintf(w, "BROKERS\t%s\n", bracket(ids(h.Brokers)))
	fmt.Fprintf(w, "BROKERS DOWN\t%s\n", bracket(ids(h.BrokersDown)))
	for _, l := range []struct {
		name  string
		parts []string
	}{
		{"OFFLINE PARTITIONS", h.Offline},
		{"LEADERLESS PARTITIONS", h.Leaderless},
		{"UNDER-REPLICATED PARTITIONS", h.UnderReplicated},
		{"UNDER-MIN-ISR PARTITIONS", h.UnderMinISR},
	} {
		shown := l.parts
		more := ""
		if len(shown) > listedInTable {
			shown, more = shown[:listedInTable], fmt.Sprintf(" and %d more", len(l.parts)-listedInTable)
		}
		fmt.Fprintf(w, "%s (%d)\t%s%s\n", l.name, len(l.parts), bracket(shown), more)
	}
	w.Flush()
	return code
}

// checkHealth reads the metadata and the topics' min.insync.replicas
// and judges them; cfgErr is the configs' error (under-min-ISR then not
// checked).
func checkHealth(ctx context.Context, adm *kadm.Client) (h health, cfgErr error, err error) {
	md, err := adm.Metadata(ctx)
	if err != nil {
		return h, nil, err
	}
	minISR, cfgErr := topicsMinISR(ctx, adm, md.Topics.Names())
	if cfgErr != nil && ctx.Err() != nil {
		// Out of time, not refused: no judgement without the configs.
		return h, nil, ctx.Err()
	}
	h = assess(md, minISR)
	h.MinISRChecked = cfgErr == nil
	return h, cfgErr, nil
}

// assess judges the metadata. minISR holds each topic's
// min.insync.replicas (missing: not checked).
func assess(md kadm.Metadata, minISR map[string]int) health {
	h := health{Controller: md.Controller, Brokers: []int32{}, BrokersDown: []int32{}, Offline: []string{},
		Leaderless: []string{}, UnderReplicated: []string{}, UnderMinISR: []string{}}
	live := map[int32]bool{}
	for _, b := range md.Brokers {
		live[b.NodeID] = true
		h.Brokers = append(h.Brokers, b.NodeID)
	}
	down := map[int32]bool{}
	for _, t := range md.Topics.Sorted() {
		for _, p := range t.Partitions.Sorted() {
			name := fmt.Sprintf("%s/%d", t.Topic, p.Partition)
			for _, r := range p.Replicas {
				if !live[r] {
					down[r] = true
				}
			}
			for _, r := range p.OfflineReplicas {
				down[r] = true
			}
			liveISR := 0
			for _, r := range p.ISR {
				if live[r] && !slices.Contains(p.OfflineReplicas, r) {
					liveISR++
				}
			}
			if p.Leader < 0 || !live[p.Leader] {
				h.Leaderless = append(h.Leaderless, name)
				if liveISR == 0 {
					h.Offline = append(h.Offline, name)
				}
			}
			if len(p.ISR) < len(p.Replicas) {
				h.UnderReplicated = append(h.UnderReplicated, name)
			}
			if m, ok := minISR[t.Topic]; ok && len(p.ISR) < m {
				h.UnderMinISR = append(h.UnderMinISR, name)
			}
		}
	}
	for id := range down {
		h.BrokersDown = append(h.BrokersDown, id)
	}
	slices.Sort(h.Brokers)
	slices.Sort(h.BrokersDown)
	for _, r := range []struct {
		bad    bool
		reason string
	}{
		{md.Controller < 0, "no_controller"},
		{len(h.BrokersDown) > 0, "brokers_down"},
		{len(h.Offline) > 0, "offline_partitions"},
		{len(h.Leaderless) > 0, "leaderless_partitions"},
		{len(h.UnderReplicated) > 0, "under_replicated_partitions"},
		{len(h.UnderMinISR) > 0, "under_min_isr_partitions"},
	} {
		if r.bad {
			h.UnhealthyReasons = append(h.UnhealthyReasons, r.reason)
		}
	}
	if h.UnhealthyReasons == nil {
		h.UnhealthyReasons = []string{}
	}
	h.Healthy = len(h.UnhealthyReasons) == 0
	return h
}

// topicsMinISR reads min.insync.replicas of every topic (one
// DescribeConfigs).
func topicsMinISR(ctx context.Context, adm *kadm.Client, topics []string) (map[string]int, error) {
	m := map[string]int{}
	if len(topics) == 0 {
		return m, nil
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, err
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			continue // a topic deleted since the metadata: nothing to judge
		}
		for _, cfg := range rc.Configs {
			if cfg.Key != "min.insync.replicas" {
				continue
			}
			if n, err := strconv.Atoi(cfg.MaybeValue()); err == nil {
				m[rc.Name] = n
			}
		}
	}
	return m, nil
}

func ids(v []int32) []string {
	s := make([]string, len(v))
	for i, id := range v {
		s[i] = strconv.Itoa(int(id))
	}
	return s
}

func bracket(v []string) string { return "[" + strings.Join(v, " ") + "]" }
