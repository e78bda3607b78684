// Package quota holds the rate sensor Kafka's quota managers share (its
// metrics library's Sensor with a Rate over a SampledStat): the replication
// throttles of KIP-73 (replication.ReplicationQuota) use it, and the client
// quotas of KIP-13 (wire/) may import it too, as it depends on nothing but
// the standard library.
package quota
