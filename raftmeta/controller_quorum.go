package raftmeta

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// quorumMembership is implemented by a metadata log that is a raft quorum
// (quorum_describe.go, quorum_membership.go; tests' logs need not).
type quorumMembership interface {
	describeQuorum(ctx context.Context) (QuorumState, error)
	addVoter(ctx context.Context, id int32, dir Uuid, addr string) error
	removeVoter(ctx context.Context, id int32, dir Uuid) error
	controllerListenerName() string
}

func (l quorumLog) describeQuorum(ctx context.Context) (QuorumState, error) {
	return l.q.DescribeQuorum(ctx)
}
func (l quorumLog) addVoter(ctx context.Context, id int32, dir Uuid, addr string) error {
	return l.q.AddVoter(ctx, id, dir, addr)
}
func (l quorumLog) removeVoter(ctx context.Context, id int32, dir Uuid) error {
	return l.q.RemoveVoter(ctx, id, dir)
}
func (l quorumLog) controllerListenerName() string { return l.q.cfg.ControllerListenerName }

// serveQuorumRequest answers DescribeQuorum, AddRaftVoter and
// RemoveRaftVoter (KafkaRaftClient's handlers), nil for another request.
// They change no metadata record, so a forwarded one is not deduplicated:
// a retried AddRaftVoter that had committed answers DUPLICATE_VOTER, as in
// Kafka.
func (c *Controller) serveQuorumRequest(ctx context.Context, req kmsg.Request) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.DescribeQuorumRequest:
		return c.DescribeQuorum(ctx, req)
	case *kmsg.AddRaftVoterRequest:
		return c.AddRaftVoter(ctx, req)
	case *kmsg.RemoveRaftVoterRequest:
		return c.RemoveRaftVoter(ctx, req)
	}
	return nil
}

// DescribeQuorum: v0-2. Only __cluster_metadata partition 0 exists
// (UNKNOWN_TOPIC_OR_PARTITION for anything else, as KRaft); a node that is
// not the active controller answers NOT_CONTROLLER, which sends a
// forwarding broker on to the next one.
func (c *Controller) DescribeQuorum(ctx context.Context, req *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse {
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic ||
		len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != MetadataPartition {
		for _, t := range req.Topics {
			rt := kmsg.NewDescribeQuorumResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewDescribeQuorumResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, kerr.UnknownTopicOrPartition.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic = MetadataTopic
	rp := kmsg.NewDescribeQuorumResponseTopicPartition()
	rp.Partition = MetadataPartition
	m, ok := c.log.(quorumMembership)
	if !ok {
		rp.ErrorCode = kerr.NotController.Code
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		return resp
	}
	st, err := m.describeQuorum(ctx)
	if err != nil {
		rp.ErrorCode, _ = quorumErrorCode(err)
		if req.Version >= 2 {
			rp.ErrorMessage = kmsg.StringPtr(err.Error())
		}
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		return resp
	}
	rp.LeaderID, rp.LeaderEpoch, rp.HighWatermark = st.LeaderID, st.LeaderEpoch, st.HighWatermark
	rp.CurrentVoters = replicaStates(st.Voters)
	rp.Observers = replicaStates(st.Observers)
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	if req.Version >= 2 {
		// Every member's CONTROLLER address: raft's, which is where the
		// leader reaches it (observers too, so an operator can pass it
		// on to AddRaftVoter).
		for _, r := range append(st.Voters, st.Observers...) {
			n := kmsg.NewDescribeQuorumResponseNode()
			n.NodeID = r.ID
			l := kmsg.NewDescribeQuorumResponseNodeListener()
			l.Name = m.controllerListenerName()
			l.Host, l.Port = splitAddr(r.Addr)
			n.Listeners = append(n.Listeners, l)
			resp.Nodes = append(resp.Nodes, n)
		}
	}
	return resp
}

// replicaStates converts replicas to DescribeQuorum's form.
func replicaStates(reps []QuorumReplica) []kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return -1
		}
		return t.UnixMilli()
	}
	out := make([]kmsg.DescribeQuorumResponseTopicPartitionReplicaState, 0, len(reps))
	for _, r := range reps {
		s := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		s.ReplicaID, s.ReplicaDirectoryID, s.LogEndOffset = r.ID, r.DirectoryID, r.LogEndOffset
		s.LastFetchTimestamp, s.LastCaughtUpTimestamp = ms(r.LastFetch), ms(r.LastCaughtUp)
		out = append(out, s)
	}
	return out
}

// quorumErrorCode maps a quorum error to Kafka's code and message.
func quorumErrorCode(err error) (int16, string) {
	var vc *VoterChangeError
	switch {
	case errors.As(err, &vc):
		return vc.Err.Code, vc.Message
	case errors.Is(err, ErrNotController):
		return kerr.NotController.Code, err.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return kerr.RequestTimedOut.Code, err.Error()
	}
	return kerr.UnknownServerError.Code, err.Error()
}

// voterTimeout bounds a voter change by the request's TimeoutMillis
// (AddRaftVoter) or, without one, Kafka's request.timeout.ms default.
func voterTimeout(ctx context.Context, ms int32) (context.Context, context.CancelFunc) {
	d := 30 * time.Second
	if ms > 0 {
		d = time.Duration(ms) * time.Millisecond
	}
	return context.WithTimeout(ctx, d)
}

// changeVoters runs a voter change after the validation KafkaRaftClient
// does before either change (the cluster id; a voter key with a directory
// id), bounded by timeoutMs (none: Kafka's request.timeout.ms default),
// and returns the answer's error code and message.
func (c *Controller) changeVoters(ctx context.Context, clusterID *string, id int32, dir [16]byte, timeoutMs int32,
	change func(ctx context.Context, m quorumMembership) error) (int16, *string) {
	if img := c.log.Image(); clusterID != nil && img.ClusterID != "" && *clusterID != img.ClusterID {
		return kerr.InconsistentClusterID.Code, kmsg.StringPtr(fmt.Sprintf("The given id %q doesn't match the cluster id %q", *clusterID, img.ClusterID))
	}
	if id < 0 || Uuid(dir).IsZero() {
		return kerr.InvalidRequest.Code, kmsg.StringPtr("The request didn't include a valid voter: it needs the voter's id and directory id")
	}
	if level := c.log.Image().FeatureLevel(FeatureKRaftVersion); level < 1 {
		// AddVoterHandler and RemoveVoterHandler: a static quorum
		// (kraft.version 0) is not reconfigured until it is upgraded.
		return kerr.UnsupportedVersion.Code, kmsg.StringPtr(fmt.Sprintf("Cluster doesn't support changing the voters because the %s feature is %d", FeatureKRaftVersion, level))
	}
	m, ok := c.log.(quorumMembership)
	if !ok {
		return kerr.NotController.Code, nil
	}
	ctx, cancel := voterTimeout(ctx, timeoutMs)
	defer cancel()
	if err := change(ctx, m); err != nil {
		code, msg := quorumErrorCode(err)
		return code, kmsg.StringPtr(msg)
	}
	return 0, nil
}

// AddRaftVoter: v0-1 (KIP-853). The new voter is a node that follows the
// metadata log as an observer (a broker-only node) and is caught up, at
// the address of its CONTROLLER listener in the request, with the
// directory id its broker registered.
func (c *Controller) AddRaftVoter(ctx context.Context, req *kmsg.AddRaftVoterRequest) *kmsg.AddRaftVoterResponse {
	resp := req.ResponseKind().(*kmsg.AddRaftVoterResponse)
	resp.ErrorCode, resp.ErrorMessage = c.changeVoters(ctx, req.ClusterID, req.VoterID, req.VoterDirectoryID, req.TimeoutMillis,
		func(ctx context.Context, m quorumMembership) error {
			for _, l := range req.Listeners {
				if l.Name == m.controllerListenerName() {
					return m.addVoter(ctx, req.VoterID, req.VoterDirectoryID, net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))))
				}
			}
			return voterChangeErr(kerr.InvalidRequest, "Add voter request didn't include the endpoint for the default listener %s", m.controllerListenerName())
		})
	return resp
}

// RemoveRaftVoter: v0 (KIP-853).
func (c *Controller) RemoveRaftVoter(ctx context.Context, req *kmsg.RemoveRaftVoterRequest) *kmsg.RemoveRaftVoterResponse {
	resp := req.ResponseKind().(*kmsg.RemoveRaftVoterResponse)
	resp.ErrorCode, resp.ErrorMessage = c.changeVoters(ctx, req.ClusterID, req.VoterID, req.VoterDirectoryID, 0,
		func(ctx context.Context, m quorumMembership) error {
			return m.removeVoter(ctx, req.VoterID, req.VoterDirectoryID)
		})
	return resp
}
