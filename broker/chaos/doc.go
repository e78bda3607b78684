// Package chaos holds the cluster chaos tests of issue 4: a three-node
// in-process cluster (broker/brokertest.StartCluster) takes idempotent
// acks=all produce traffic while a seeded schedule kills partition
// leaders, kills the active controller or cuts a leader off from the
// others (brokertest/faultnet). After the faults heal, every test reads
// each partition back and counts what Kafka's replication contract
// forbids: acknowledged records that are gone, records stored twice,
// offsets out of order, and replicas whose logs differ below the high
// watermark (the properties of Kafka's ReplicaManager and KIP-101/279
// truncation, checked end to end). The transactional test (issue 23) runs
// franz-go transactional producers while coordinators' nodes and
// partition leaders die, and counts with a read_committed reader what
// Kafka's transactions forbid: committed records lost, aborted records
// visible, transactions partly visible, duplicates.
//
// The package has no code outside its tests. Every test prints its seed;
// STRAIT_CHAOS_SEED=<seed> replays the same fault schedule (the broker's
// own timing still varies from run to run). `go test` runs the short
// forms; `make test-long` (build tag "long") the soak forms.
package chaos
