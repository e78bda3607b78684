// Package storage is Strait's log engine: one Log per partition directory,
// laid out on disk exactly as Apache Kafka lays it out, so Kafka's own tools
// (kafka-dump-log.sh) read our .log, .index, .timeindex and
// leader-epoch-checkpoint files.
//
// The names are Kafka's: Log plays UnifiedLog's role over LogSegments, each a
// .log file of v2 record batches with a sparse OffsetIndex, a TimeIndex and
// a TxnIndex of aborted transactions; LeaderEpochCache maps leader epochs to
// start offsets (KIP-101); ProducerStateManager tracks idempotent and
// transactional producers. The package knows nothing of the network, topic
// metadata or replication: callers pass offsets, epochs and the high
// watermark in.
//
// Every file operation goes through vfs.FS and every time read through
// clock.Clock, so tests run the engine on an in-memory filesystem that
// simulates crashes and injects IO errors.
package storage
