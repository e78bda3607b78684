package wire

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// configDenied is the error code of a config request on a resource the
// client may not op (DESCRIBE_CONFIGS or ALTER_CONFIGS), 0 when allowed
// (KafkaApis / ConfigAdminManager: a topic's on the topic, a group's on
// the group, a broker's, a broker logger's and client metrics' on the
// cluster, a cluster mirror's on the mirror, KIP-1279 digest 2.4).
// Resource types without a rule are left to the config service, which
// refuses the ones it does not know.
func configDenied(c authCheck, t kmsg.ConfigResourceType, name string, op kmsg.ACLOperation) int16 {
	if !c.on {
		return 0
	}
	var rt kmsg.ACLResourceType
	var code int16
	switch t {
	case kmsg.ConfigResourceTypeTopic:
		rt, code = resTopic, errTopicAuth
	case kmsg.ConfigResourceTypeGroupConfig:
		rt, code = resGroup, errGroupAuth
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger, kmsg.ConfigResourceTypeClientMetrics:
		rt, code, name = resCluster, errClusterAuth, authz.ClusterName
	case kmsg.ConfigResourceType(raftmeta.ConfigResourceMirror):
		rt, code = resMirror, errMirrorAuth
	default:
		return 0
	}
	if c.allowed(rt, name, op) {
		return 0
	}
	return code
}

// configDeniedError is a denied config resource's error code and message.
func configDeniedError(code int16) (int16, *string) {
	err := kerr.ErrorForCode(code)
	if code == errMirrorAuth {
		err = mirrormsg.ClusterMirrorAuthorizationFailed
	}
	return code, kmsg.StringPtr(err.(*kerr.Error).Description)
}
