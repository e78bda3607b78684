// Package cluster is `strait cluster`: the cluster's brokers and
// controller, its health, broker configs (rpk cluster info|health|config)
// and client quotas (kafka-configs --entity-type users|clients), over
// public Kafka APIs only: Metadata, DescribeConfigs,
// IncrementalAlterConfigs, DescribeClientQuotas, AlterClientQuotas), so it
// works against any Kafka cluster; partition reassignment
// (kafka-reassign-partitions) and the metadata quorum
// (kafka-metadata-quorum's describe, add-controller and remove-controller
// over DescribeQuorum, AddRaftVoter and RemoveRaftVoter).
package cluster

import "github.com/strait-io/strait/cmd/strait/ctl/kit"

// Group is `strait cluster`.
func Group() *kit.Group {
	return &kit.Group{
		Name:    "cluster",
		Summary: "the cluster's brokers, health, broker configs, client quotas, reassignment and metadata quorum",
		Help: `health exits 1 while the cluster is unhealthy (offline, leaderless,
under-replicated or under-min-ISR partitions, or a replica on a broker that
is down), so scripts can wait for a healthy cluster:
  until strait cluster health >/dev/null; do sleep 1; done

config works on Kafka's BROKER config resources: without --broker on the
cluster-wide default (the resource named '', as kafka-configs
--entity-default), with --broker N on broker N only.

quotas works on client quotas (KIP-546) of a user (--user), a client id
(--client-id), both, or an address (--ip); '<default>' names the default
entity of a type, as kafka-configs --entity-default does.

reassign moves replicas as kafka-reassign-partitions.sh does (KIP-455),
with its JSON plans; decommission moves every replica off a broker and
waits. A move copies the partition to its new replicas: give it time
with --timeout (30s by default).

quorum add-voter N makes node N, which follows the metadata log as an
observer (a process.roles=broker node), a voter of the quorum; remove-voter
N takes a voter out (it stays an observer, and may then stop). One change
at a time; the directory id and listener default to what describe shows.`,
		Commands: []*kit.Command{infoCommand(), healthCommand(), configCommand(), quotasCommand(), reassignCommand(), decommissionCommand(), quorumCommand()},
	}
}
