// Package quota holds the rate sensor Kafka's quota managers share (its
// metrics library's Sensor with a Rate over a SampledStat): the replication
// throttles of KIP-73 (replication.ReplicationQuota) and the client quotas
// of KIP-13 (wire/clientquota) use it. It depends on nothing but the
// standard library and lives under storage/, beside storage/clock, because
// that is the one layer both wire/ and replication/ may import (DESIGN.md's
// import flow); it is not a storage concern.
package quota
