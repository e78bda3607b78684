package broker

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// describeMirrorConfigs answers DescribeConfigs for a CLUSTER_MIRROR
// resource (KIP-1279 stores and describes a mirror's source-connection
// configs as that config resource): the configs the mirror was created or
// altered with, where a secret (sasl.jaas.config, ssl.keystore.key) has a
// null value and IsSensitive set, as Kafka describes a password config.
// names filters as DescribeConfigs' ConfigNames does.
func describeMirrorConfigs(img *raftmeta.Image, rr *kmsg.DescribeConfigsResponseResource, names []string) {
	entries, ok := raftmeta.DescribeMirrorConfigs(img, rr.ResourceName)
	if !ok {
		rr.ErrorCode = mirrormsg.UnknownClusterMirror.Code
		rr.ErrorMessage = kmsg.StringPtr("Cluster mirror " + rr.ResourceName + " does not exist")
		return
	}
	for _, e := range entries {
		if len(names) > 0 && !slices.Contains(names, e.Name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value, c.IsSensitive = e.Name, e.Value, e.Sensitive
		// Kafka's ConfigSource has no value for a mirror's configs
		// (KIP-1279 adds none): UNKNOWN, as a client expects for a
		// source it cannot name.
		c.Source = kmsg.ConfigSourceUnknown
		rr.Configs = append(rr.Configs, c)
	}
}
