package broker

import (
	replshare "github.com/strait-io/strait/replication/share"
	"github.com/strait-io/strait/wire/sasl"
)

// ShareGroupConfigForTest is what the node's share partitions are told of
// a group's configs (group_configs.go).
func (n *Node) ShareGroupConfigForTest(group string) replshare.GroupConfig {
	return n.groupConfigs().ShareGroupConfig(group)
}

// ScramMechanismForTest is the SCRAM mechanism a SASL listener of this
// node would use (scram_credentials.go).
func (n *Node) ScramMechanismForTest(name string) (sasl.Mechanism, error) {
	return scramMechanism(name, n.quorum.Image)
}
