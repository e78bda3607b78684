package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// quorumFlags are `cluster quorum`'s own flags.
type quorumFlags struct {
	// Dir is the node's metadata directory id (meta.properties
	// directory.id); empty takes the one DescribeQuorum reports.
	Dir string
	// Listener is the new voter's CONTROLLER host:port; empty takes the
	// one DescribeQuorum reports.
	Listener string
}

// quorumInfo is `cluster quorum describe --json`: kafka-metadata-quorum's
// describe --status and --replication together.
type quorumInfo struct {
	LeaderID             int32           `json:"leader_id"`
	LeaderEpoch          int32           `json:"leader_epoch"`
	HighWatermark        int64           `json:"high_watermark"`
	MaxFollowerLag       int64           `json:"max_follower_lag"`
	MaxFollowerLagTimeMs int64           `json:"max_follower_lag_time_ms"`
	Replicas             []quorumReplica `json:"replicas"`
}

type quorumReplica struct {
	ID int32 `json:"id"`
	// Role is leader, voter or observer.
	Role         string `json:"role"`
	DirectoryID  string `json:"directory_id"`
	LogEndOffset int64  `json:"log_end_offset"`
	// Lag is the leader's log end offset less this one's.
	Lag int64 `json:"lag"`
	// The timestamps are Unix milliseconds, -1 when unknown.
	LastFetchTimestamp    int64  `json:"last_fetch_timestamp"`
	LastCaughtUpTimestamp int64  `json:"last_caught_up_timestamp"`
	Listener              string `json:"listener"`
	Endpoint              string `json:"endpoint"`
}

func quorumCommand() *kit.Command {
	return &kit.Command{
		Name:    "quorum",
		Args:    "describe | add-voter ID | remove-voter ID  [--dir UUID] [--listener HOST:PORT]",
		Summary: "the metadata quorum: its leader and replicas, and adding or removing a voter (KIP-853)",
		Examples: []string{
			"strait cluster quorum describe",
			"strait cluster quorum describe --json | jq '.replicas[] | select(.role == \"observer\")'",
			"strait cluster quorum add-voter 4        # node 4 follows the log as an observer",
			"strait cluster quorum remove-voter 1     # node 1 stays an observer and may stop",
		},
		MinArgs: 1, MaxArgs: 2,
		Flags: func(fs *flag.FlagSet) any {
			f := &quorumFlags{}
			fs.StringVar(&f.Dir, "dir", "", "the node's metadata directory `id` (default: as DescribeQuorum reports it)")
			fs.StringVar(&f.Listener, "listener", "", "add-voter: the new voter's CONTROLLER `host:port` (default: as DescribeQuorum reports it)")
			return f
		},
		Run: runQuorum,
	}
}

func runQuorum(ctx context.Context, c *kit.Ctx, args []string, flags any) int {
	f := flags.(*quorumFlags)
	want := 2
	switch args[0] {
	case "describe":
		want = 1
	case "add-voter", "remove-voter":
	default:
		return c.Usagef("unknown quorum command %q (describe, add-voter or remove-voter)", args[0])
	}
	if len(args) != want {
		return c.Usagef("quorum %s takes %d argument(s) after it, got %d", args[0], want-1, len(args)-1)
	}
	id := int32(-1)
	if want == 2 {
		n, err := strconv.ParseInt(args[1], 10, 32)
		if err != nil || n < 0 {
			return c.Usagef("%s needs a node id, got %q", args[0], args[1])
		}
		id = int32(n)
	}
	var dir [16]byte
	if f.Dir != "" {
		b, err := base64.RawURLEncoding.DecodeString(f.Dir)
		if err != nil || len(b) != 16 {
			return c.Usagef("--dir must be a directory id (22 base64url characters, as meta.properties' directory.id), got %q", f.Dir)
		}
		copy(dir[:], b)
	}
	if f.Listener != "" {
		if _, _, err := net.SplitHostPort(f.Listener); err != nil {
			return c.Usagef("--listener must be host:port, got %q", f.Listener)
		}
	}
	cl, err := c.Client()
	if err != nil {
		return c.Fail(err)
	}
	info, nodes, err := describeQuorum(ctx, cl)
	if err != nil {
		return c.Fail(err)
	}
	switch args[0] {
	case "add-voter":
		return addVoter(ctx, c, cl, info, nodes, id, dir, f.Listener)
	case "remove-voter":
		return removeVoter(ctx, c, cl, info, id, dir)
	}
	if c.Globals.JSON {
		return c.JSON(info)
	}
	printQuorum(c, info)
	return kit.ExitOK
}

// describeQuorum asks the active controller (kgo sends DescribeQuorum to
// it) and returns the quorum and each node's CONTROLLER listener.
func describeQuorum(ctx context.Context, cl *kgo.Client) (quorumInfo, map[int32]kmsg.DescribeQuorumResponseNodeListener, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return quorumInfo{}, nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return quorumInfo{}, nil, kit.WithMessage(err, deref(resp.ErrorMessage))
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return quorumInfo{}, nil, errors.New("DescribeQuorum answered without __cluster_metadata-0")
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return quorumInfo{}, nil, kit.WithMessage(err, deref(p.ErrorMessage))
	}
	nodes := map[int32]kmsg.DescribeQuorumResponseNodeListener{}
	for _, n := range resp.Nodes {
		if len(n.Listeners) > 0 {
			nodes[n.NodeID] = n.Listeners[0]
		}
	}
	info := quorumInfo{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark, Replicas: []quorumReplica{}}
	var leaderEnd, leaderFetch int64
	for _, r := range p.CurrentVoters {
		if r.ReplicaID == p.LeaderID {
			leaderEnd, leaderFetch = r.LogEndOffset, r.LastFetchTimestamp
		}
	}
	add := func(rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState, role string) {
		for _, r := range rs {
			qr := quorumReplica{ID: r.ReplicaID, Role: role, DirectoryID: base64.RawURLEncoding.EncodeToString(r.ReplicaDirectoryID[:]),
				LogEndOffset: r.LogEndOffset, Lag: max(leaderEnd-r.LogEndOffset, 0),
				LastFetchTimestamp: r.LastFetchTimestamp, LastCaughtUpTimestamp: r.LastCaughtUpTimestamp}
			if r.ReplicaID == p.LeaderID {
				qr.Role = "leader"
			}
			if l, ok := nodes[r.ReplicaID]; ok {
				qr.Listener, qr.Endpoint = l.Name, net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))
			}
			if role == "voter" && r.ReplicaID != p.LeaderID {
				// kafka-metadata-quorum's MaxFollowerLag and
				// MaxFollowerLagTimeMs are over the voters.
				info.MaxFollowerLag = max(info.MaxFollowerLag, qr.Lag)
				if r.LastCaughtUpTimestamp >= 0 && leaderFetch > 0 {
					info.MaxFollowerLagTimeMs = max(info.MaxFollowerLagTimeMs, leaderFetch-r.LastCaughtUpTimestamp)
				}
			}
			info.Replicas = append(info.Replicas, qr)
		}
	}
	add(p.CurrentVoters, "voter")
	add(p.Observers, "observer")
	return info, nodes, nil
}

func printQuorum(c *kit.Ctx, info quorumInfo) {
	w := kit.NewTable(c.Stdout)
	fmt.Fprintf(w, "LEADER\t%d\n", info.LeaderID)
	fmt.Fprintf(w, "LEADER EPOCH\t%d\n", info.LeaderEpoch)
	fmt.Fprintf(w, "HIGH WATERMARK\t%d\n", info.HighWatermark)
	fmt.Fprintf(w, "MAX FOLLOWER LAG\t%d\n", info.MaxFollowerLag)
	fmt.Fprintf(w, "MAX FOLLOWER LAG TIME\t%d ms\n", info.MaxFollowerLagTimeMs)
	w.Flush()
	fmt.Fprintln(c.Stdout)
	now := time.Now().UnixMilli()
	ago := func(ms int64) string {
		if ms < 0 {
			return "-"
		}
		return fmt.Sprintf("%d ms ago", max(now-ms, 0))
	}
	w = kit.NewTable(c.Stdout)
	fmt.Fprintln(w, "ID\tROLE\tDIRECTORY\tLOG END\tLAG\tLAST FETCH\tLAST CAUGHT UP\tENDPOINT")
	for _, r := range info.Replicas {
		fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", r.ID, r.Role, r.DirectoryID, r.LogEndOffset, r.Lag,
			ago(r.LastFetchTimestamp), ago(r.LastCaughtUpTimestamp), orDash(r.Endpoint))
	}
	w.Flush()
}

// replicaOf is node id in info, if it is a member.
func replicaOf(info quorumInfo, id int32) (quorumReplica, bool) {
	for _, r := range info.Replicas {
		if r.ID == id {
			return r, true
		}
	}
	return quorumReplica{}, false
}

// directoryOr is dir, or the directory id info reports for r when dir is
// zero.
func directoryOr(dir [16]byte, r quorumReplica) [16]byte {
	if dir != ([16]byte{}) {
		return dir
	}
	b, _ := base64.RawURLEncoding.DecodeString(r.DirectoryID)
	copy(dir[:], b)
	return dir
}

// voterChanged is a voter change's outcome: the change in words (or
// --json), or the error Kafka gave.
func voterChanged(c *kit.Ctx, code int16, msg *string, what string, id int32, dir [16]byte) int {
	if err := kerr.ErrorForCode(code); err != nil {
		return c.Fail(kit.WithMessage(err, deref(msg)))
	}
	if c.Globals.JSON {
		return c.JSON(map[string]any{"voter": id, "directory_id": base64.RawURLEncoding.EncodeToString(dir[:]), "change": what})
	}
	fmt.Fprintf(c.Stdout, "%s voter %d\n", what, id)
	return kit.ExitOK
}

func addVoter(ctx context.Context, c *kit.Ctx, cl *kgo.Client, info quorumInfo, nodes map[int32]kmsg.DescribeQuorumResponseNodeListener, id int32, dir [16]byte, listener string) int {
	r, ok := replicaOf(info, id)
	if !ok && (dir == [16]byte{} || listener == "") {
		return c.Fail(fmt.Errorf("node %d does not follow the metadata log: start it (process.roles=broker) so it shows as an observer, or give --dir and --listener", id))
	}
	req := kmsg.NewPtrAddRaftVoterRequest()
	req.VoterID, req.VoterDirectoryID = id, directoryOr(dir, r)
	req.TimeoutMillis = int32(30 * time.Second / time.Millisecond)
	l := kmsg.NewAddRaftVoterRequestListener()
	if n, ok := nodes[id]; ok {
		l.Name, l.Host, l.Port = n.Name, n.Host, n.Port
	}
	if listener != "" {
		host, port, _ := net.SplitHostPort(listener)
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return c.Usagef("--listener port %q", port)
		}
		l.Host, l.Port = host, uint16(p)
		if l.Name == "" {
			l.Name = "CONTROLLER"
		}
	}
	req.Listeners = append(req.Listeners, l)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return c.Fail(err)
	}
	return voterChanged(c, resp.ErrorCode, resp.ErrorMessage, "added", id, req.VoterDirectoryID)
}

func removeVoter(ctx context.Context, c *kit.Ctx, cl *kgo.Client, info quorumInfo, id int32, dir [16]byte) int {
	r, ok := replicaOf(info, id)
	if !ok && dir == [16]byte{} {
		return c.Fail(fmt.Errorf("node %d is not a member of the metadata quorum", id))
	}
	req := kmsg.NewPtrRemoveRaftVoterRequest()
	req.VoterID, req.VoterDirectoryID = id, directoryOr(dir, r)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return c.Fail(err)
	}
	return voterChanged(c, resp.ErrorCode, resp.ErrorMessage, "removed", id, req.VoterDirectoryID)
}
