package raftmeta

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// The control managers. Kafka's QuorumController hands each request to
// the manager of its domain (ReplicationControlManager,
// ConfigurationControlManager, ClusterControlManager, AclControlManager,
// ...); the Controller does the same, and keeps for itself what they all
// share: the write slot over the metadata log (write), the config, ids
// (newUuid), and who sent a forwarded request (requestingNode). A manager
// reaches those through its embedded *Controller, as Kafka's managers
// share the QuorumController's event queue and snapshot registry; what is
// a domain's own (the broker sessions) is its manager's. A manager calls
// another domain through that domain's manager, never through the
// Controller's delegating methods below.

// aclControl is AclControlManager: the ACL bindings (controller_acls.go).
type aclControl struct{ *Controller }

// CreateACLs is aclControl.CreateACLs.
func (c *Controller) CreateACLs(ctx context.Context, req *kmsg.CreateACLsRequest) *kmsg.CreateACLsResponse {
	return c.acls.CreateACLs(ctx, req)
}

// DescribeACLs is aclControl.DescribeACLs.
func (c *Controller) DescribeACLs(ctx context.Context, req *kmsg.DescribeACLsRequest) *kmsg.DescribeACLsResponse {
	return c.acls.DescribeACLs(ctx, req)
}

// DeleteACLs is aclControl.DeleteACLs.
func (c *Controller) DeleteACLs(ctx context.Context, req *kmsg.DeleteACLsRequest) *kmsg.DeleteACLsResponse {
	return c.acls.DeleteACLs(ctx, req)
}

// scramControl is ScramControlManager: the SCRAM credentials
// (controller_scram.go, and their sync from a mirror's source in
// controller_scram_sync.go).
type scramControl struct{ *Controller }

// AlterUserScramCredentials is scramControl.AlterUserScramCredentials.
func (c *Controller) AlterUserScramCredentials(ctx context.Context, req *kmsg.AlterUserSCRAMCredentialsRequest) *kmsg.AlterUserSCRAMCredentialsResponse {
	return c.scram.AlterUserScramCredentials(ctx, req)
}

// DescribeUserScramCredentials is scramControl.DescribeUserScramCredentials.
func (c *Controller) DescribeUserScramCredentials(ctx context.Context, req *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse {
	return c.scram.DescribeUserScramCredentials(ctx, req)
}

// configurationControl is ConfigurationControlManager: dynamic configs of
// topics, brokers, groups and mirrors (controller_configs.go).
type configurationControl struct{ *Controller }

// AlterConfigs is configurationControl.AlterConfigs.
func (c *Controller) AlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) *kmsg.AlterConfigsResponse {
	return c.configs.AlterConfigs(ctx, req)
}

// IncrementalAlterConfigs is configurationControl.IncrementalAlterConfigs.
func (c *Controller) IncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse {
	return c.configs.IncrementalAlterConfigs(ctx, req)
}

// clusterControl is ClusterControlManager with ProducerIdControlManager:
// broker registrations, heartbeats and sessions, fencing, and producer id
// blocks (controller_brokers.go, controller_cluster.go).
type clusterControl struct {
	*Controller
	// sessions are the broker sessions; only build functions (holding the
	// write slot) touch them.
	sessions *sessions
}

// sessionsFor returns the broker sessions, started afresh when this
// controller's leadership is new. Call it from a build function only.
func (c *clusterControl) sessionsFor(img *Image) *sessions {
	if t := c.log.Term(); c.sessions.term != t {
		c.sessions.activate(t, img)
	}
	return c.sessions
}

// BrokerRegistration is clusterControl.BrokerRegistration.
func (c *Controller) BrokerRegistration(ctx context.Context, req *kmsg.BrokerRegistrationRequest) *kmsg.BrokerRegistrationResponse {
	return c.cluster.BrokerRegistration(ctx, req)
}

// BrokerHeartbeat is clusterControl.BrokerHeartbeat.
func (c *Controller) BrokerHeartbeat(ctx context.Context, req *kmsg.BrokerHeartbeatRequest) *kmsg.BrokerHeartbeatResponse {
	return c.cluster.BrokerHeartbeat(ctx, req)
}

// FenceStaleBrokers is clusterControl.FenceStaleBrokers.
func (c *Controller) FenceStaleBrokers(ctx context.Context) (int, error) {
	return c.cluster.FenceStaleBrokers(ctx)
}

// RegisterBroker is clusterControl.RegisterBroker.
func (c *Controller) RegisterBroker(ctx context.Context, b Broker) error {
	return c.cluster.RegisterBroker(ctx, b)
}

// AllocateProducerIDs is clusterControl.AllocateProducerIDs.
func (c *Controller) AllocateProducerIDs(ctx context.Context, brokerID int32, brokerEpoch int64) (first int64, count int32, err error) {
	return c.cluster.AllocateProducerIDs(ctx, brokerID, brokerEpoch)
}

func (c *Controller) allocateProducerIDs(ctx context.Context, req *kmsg.AllocateProducerIDsRequest) *kmsg.AllocateProducerIDsResponse {
	return c.cluster.allocateProducerIDs(ctx, req)
}

// replicationControl is ReplicationControlManager: topics, partitions,
// their ISR and leader elections (controller_topics.go,
// controller_alterpartition.go, controller_elections.go,
// partition_change.go).
type replicationControl struct{ *Controller }

// CreateTopics is replicationControl.CreateTopics.
func (c *Controller) CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse {
	return c.replication.CreateTopics(ctx, req)
}

// DeleteTopics is replicationControl.DeleteTopics.
func (c *Controller) DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	return c.replication.DeleteTopics(ctx, req)
}

// CreatePartitions is replicationControl.CreatePartitions.
func (c *Controller) CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse {
	return c.replication.CreatePartitions(ctx, req)
}

// AlterPartition is replicationControl.AlterPartition.
func (c *Controller) AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
	return c.replication.AlterPartition(ctx, req)
}

// ElectLeaders is replicationControl.ElectLeaders.
func (c *Controller) ElectLeaders(ctx context.Context, req *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse {
	return c.replication.ElectLeaders(ctx, req)
}

// ElectUncleanLeaders is replicationControl.ElectUncleanLeaders.
func (c *Controller) ElectUncleanLeaders(ctx context.Context) (int, error) {
	return c.replication.ElectUncleanLeaders(ctx)
}

// AlterPartitionReassignments is
// replicationControl.AlterPartitionReassignments (controller_reassign.go).
func (c *Controller) AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse {
	return c.replication.AlterPartitionReassignments(ctx, req)
}

// UnregisterBroker is clusterControl.UnregisterBroker
// (controller_unregister.go).
func (c *Controller) UnregisterBroker(ctx context.Context, req *kmsg.UnregisterBrokerRequest) *kmsg.UnregisterBrokerResponse {
	return c.cluster.UnregisterBroker(ctx, req)
}

// RebalanceLeaders is replicationControl.RebalanceLeaders.
func (c *Controller) RebalanceLeaders(ctx context.Context) (int, error) {
	return c.replication.RebalanceLeaders(ctx)
}

// mirrorControl is the controller side of KIP-1279 cluster mirrors:
// creating and deleting mirrors, their topics' mirror.name, leader epoch
// bumps and drill clones of mirror topics (controller_mirrors.go,
// controller_mirrors_topics.go, controller_mirrors_epochs.go,
// controller_mirrors_clone.go).
type mirrorControl struct{ *Controller }

// serveMirrorRequest is mirrorControl.serveMirrorRequest.
func (c *Controller) serveMirrorRequest(ctx context.Context, req kmsg.Request) kmsg.Response {
	return c.mirrors.serveMirrorRequest(ctx, req)
}

// CreateMirror is mirrorControl.CreateMirror.
func (c *Controller) CreateMirror(ctx context.Context, req *mirrormsg.CreateMirrorRequest) *mirrormsg.CreateMirrorResponse {
	return c.mirrors.CreateMirror(ctx, req)
}

// DeleteMirror is mirrorControl.DeleteMirror.
func (c *Controller) DeleteMirror(ctx context.Context, req *mirrormsg.DeleteMirrorRequest) *mirrormsg.DeleteMirrorResponse {
	return c.mirrors.DeleteMirror(ctx, req)
}

// ListMirrors is mirrorControl.ListMirrors.
func (c *Controller) ListMirrors(ctx context.Context, req *mirrormsg.ListMirrorsRequest) *mirrormsg.ListMirrorsResponse {
	return c.mirrors.ListMirrors(ctx, req)
}

// DescribeMirrors is mirrorControl.DescribeMirrors.
func (c *Controller) DescribeMirrors(ctx context.Context, req *mirrormsg.DescribeMirrorsRequest) *mirrormsg.DescribeMirrorsResponse {
	return c.mirrors.DescribeMirrors(ctx, req)
}

// StartMirrorTopics is mirrorControl.StartMirrorTopics.
func (c *Controller) StartMirrorTopics(ctx context.Context, req *mirrormsg.StartMirrorTopicsRequest) *mirrormsg.StartMirrorTopicsResponse {
	return c.mirrors.StartMirrorTopics(ctx, req)
}

// StopMirrorTopics is mirrorControl.StopMirrorTopics.
func (c *Controller) StopMirrorTopics(ctx context.Context, req *mirrormsg.StopMirrorTopicsRequest) *mirrormsg.StopMirrorTopicsResponse {
	return c.mirrors.StopMirrorTopics(ctx, req)
}

// PauseMirrorTopics is mirrorControl.PauseMirrorTopics.
func (c *Controller) PauseMirrorTopics(ctx context.Context, req *mirrormsg.PauseMirrorTopicsRequest) *mirrormsg.PauseMirrorTopicsResponse {
	return c.mirrors.PauseMirrorTopics(ctx, req)
}

// ResumeMirrorTopics is mirrorControl.ResumeMirrorTopics.
func (c *Controller) ResumeMirrorTopics(ctx context.Context, req *mirrormsg.ResumeMirrorTopicsRequest) *mirrormsg.ResumeMirrorTopicsResponse {
	return c.mirrors.ResumeMirrorTopics(ctx, req)
}

// BumpLeaderEpochs is mirrorControl.BumpLeaderEpochs.
func (c *Controller) BumpLeaderEpochs(ctx context.Context, req *mirrormsg.BumpLeaderEpochsRequest) *mirrormsg.BumpLeaderEpochsResponse {
	return c.mirrors.BumpLeaderEpochs(ctx, req)
}
