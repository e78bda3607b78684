// Package producer is the ProducerStateManager of a partition: the per
// producer-id state that makes idempotent and transactional produce work.
//
// It follows Apache Kafka's storage/internals/log classes of the same names
// (ProducerStateManager, ProducerAppendInfo, ProducerStateEntry,
// BatchMetadata, TxnMetadata, CompletedTxn, SnapshotFile):
//
//   - every appended batch that carries a producer id is validated against
//     the producer's epoch, sequence and transaction state, then staged in an
//     Update (Kafka's prepareUpdate/ProducerAppendInfo) and applied only once
//     the segment write succeeded (Commit, Kafka's update + completeTxn);
//   - the last NumBatchesToRetain batches of each producer answer duplicate
//     retries (FindDuplicate);
//   - ongoing and not-yet-replicated transactions give the first unstable
//     offset, from which the Log computes the last stable offset;
//   - the state is snapshotted to <20-digit offset>.snapshot files in Kafka's
//     binary format, so Kafka's tools read them and a restart replays only
//     the log after the newest snapshot.
//
// KIP-1279 adds one rule: a MIRROR_PID_RESET control batch expires every
// producer without an ongoing transaction (see Update.Append).
//
// The Log serialises all mutations (Update, Commit, snapshots, truncation);
// the read methods are safe to call concurrently with them.
package producer
