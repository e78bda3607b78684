package raftmeta

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
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
