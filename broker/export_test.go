package broker

import (
	replshare "github.com/strait-io/strait/replication/share"
)

// ShareGroupConfigForTest is what the node's share partitions are told of
// a group's configs (group_configs.go).
func (n *Node) ShareGroupConfigForTest(group string) replshare.GroupConfig {
	return n.groupConfigs().ShareGroupConfig(group)
}
