package cluster

import (
	"context"
	"fmt"
	"slices"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// clusterInfo is `cluster info --json`.
type clusterInfo struct {
	ClusterID      string       `json:"cluster_id"`
	Controller     int32        `json:"controller"`
	Brokers        []brokerInfo `json:"brokers"`
	Topics         int          `json:"topics"`
	InternalTopics int          `json:"internal_topics"`
	Partitions     int          `json:"partitions"`
}

type brokerInfo struct {
	ID         int32  `json:"id"`
	Host       string `json:"host"`
	Port       int32  `json:"port"`
	Rack       string `json:"rack"`
	Controller bool   `json:"controller"`
}

func infoCommand() *kit.Command {
	return &kit.Command{
		Name:    "info",
		Summary: "the cluster id, the controller, the brokers and how many topics and partitions",
		Examples: []string{
			"strait cluster info",
			"strait cluster info --json | jq .brokers",
		},
		MaxArgs: 0,
		Run:     runInfo,
	}
}

func runInfo(ctx context.Context, c *kit.Ctx, _ []string, _ any) int {
	adm, err := c.Admin()
	if err != nil {
		return c.Fail(err)
	}
	md, err := adm.Metadata(ctx)
	if err != nil {
		return c.Fail(err)
	}
	info := clusterInfo{ClusterID: md.Cluster, Controller: md.Controller, Brokers: []brokerInfo{}}
	for _, b := range md.Brokers {
		info.Brokers = append(info.Brokers, brokerInfo{ID: b.NodeID, Host: b.Host, Port: b.Port,
			Rack: deref(b.Rack), Controller: b.NodeID == md.Controller})
	}
	slices.SortFunc(info.Brokers, func(a, b brokerInfo) int { return int(a.ID) - int(b.ID) })
	for _, t := range md.Topics {
		if t.IsInternal {
			info.InternalTopics++
		} else {
			info.Topics++
		}
		info.Partitions += len(t.Partitions)
	}
	if c.Globals.JSON {
		return c.JSON(info)
	}
	w := kit.NewTable(c.Stdout)
	fmt.Fprintf(w, "CLUSTER\t%s\n", orDash(info.ClusterID))
	fmt.Fprintf(w, "CONTROLLER\t%d\n", info.Controller)
	fmt.Fprintf(w, "TOPICS\t%d (and %d internal)\n", info.Topics, info.InternalTopics)
	fmt.Fprintf(w, "PARTITIONS\t%d\n", info.Partitions)
	w.Flush()
	fmt.Fprintln(c.Stdout)
	// rpk cluster info marks the controller with a star after its id.
	w = kit.NewTable(c.Stdout)
	fmt.Fprintln(w, "ID\tHOST\tPORT\tRACK")
	for _, b := range info.Brokers {
		star := ""
		if b.Controller {
			star = "*"
		}
		fmt.Fprintf(w, "%d%s\t%s\t%d\t%s\n", b.ID, star, b.Host, b.Port, orDash(b.Rack))
	}
	w.Flush()
	return kit.ExitOK
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
